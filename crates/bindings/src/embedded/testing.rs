//! Test helpers of the embedded engines: fresh directories and the checks
//! every engine module instantiates (`engine_checks!`).
/// A fresh directory URL for `scheme` per call, in the test process's
/// scratch directory (swept by later test processes).
pub(crate) fn fresh_url(scheme: &str, query: &str) -> String {
    let dir = crate::testing::scratch_dir().join(crate::testing::unique_name(scheme));
    format!("{scheme}://{}{query}", dir.display())
}

/// Checks every embedded engine shares: a run against a directory never
/// loaded, a directory another binding holds, a directory whose files are
/// garbage (all refused with one clear line), and data that survives
/// closing and reopening, with its bytes on disk reported.
/// `$open`: `fn(&Target, &OpenOptions) -> Result<B, BindingError>`.
macro_rules! engine_checks {
    ($scheme:expr, $query:expr, $open:path) => {
        mod engine_checks {
            use super::*;
            use yardstick_core::conformance::options;

            fn open_url(url: &str, create: bool) -> Result<impl Binding, BindingError> {
                let mut opts = options(InsertMode::Insert, UpdateMode::Update);
                opts.create = create;
                $open(&Target::parse(url)?, &opts)
            }

            fn fill<B: Binding>(b: &B, n: usize) {
                crate::testing::runtime().block_on(async {
                    let mut s = b.session().await.unwrap();
                    let mut batch = Batch::default();
                    for i in 0..n {
                        let (k, v) = batch.push();
                        k.extend_from_slice(format!("user{i:06}").as_bytes());
                        for f in 0..3 {
                            v.push(f).extend_from_slice(&[b'a' + (i % 26) as u8; 100]);
                        }
                    }
                    let out = s.insert_batch(&batch).await;
                    assert_eq!(out.status(), Status::Ok, "{:?}", out.detail());
                });
            }

            #[test]
            fn a_run_before_any_load_is_refused() {
                let url = crate::embedded::testing::fresh_url($scheme, $query);
                let e = open_url(&url, false).err().unwrap().to_string();
                assert!(e.contains("yardstick load") && !e.contains('\n'), "{e}");
                // an empty directory is not a database either
                let dir = url.split_once("://").unwrap().1.split('?').next().unwrap();
                std::fs::create_dir_all(dir).unwrap();
                let e = open_url(&url, false).err().unwrap().to_string();
                assert!(e.contains("yardstick load"), "{e}");
            }

            #[test]
            fn a_directory_in_use_is_refused_and_data_survives_a_reopen() {
                let url = crate::embedded::testing::fresh_url($scheme, $query);
                let b = open_url(&url, true).unwrap();
                let e = open_url(&url, false).err().unwrap().to_string();
                assert!(e.contains("in use by another process"), "{e}");
                fill(&b, 500);
                drop(b);
                let b = open_url(&url, false).unwrap();
                assert!(b.disk_bytes().unwrap() > 0);
                crate::testing::runtime().block_on(async {
                    let mut s = b.session().await.unwrap();
                    let mut rec = Record::with_fields(3);
                    let out = s.read(b"user000499", Fields::All, &mut rec).await;
                    assert_eq!(out.status(), Status::Ok, "{:?}", out.detail());
                    assert_eq!(rec.get(2), Some(&[b'a' + (499 % 26) as u8; 100][..]));
                    let mut rows = ScanRows::with_fields(3);
                    let out = s.scan(b"user000100", 50, Fields::One(0), &mut rows).await;
                    assert_eq!((out.status(), out.rows()), (Status::Ok, 50));
                });
                let info = b.info();
                assert!(
                    !info.version.is_empty() && info.version != "unknown",
                    "{info:?}"
                );
            }

            #[test]
            fn garbage_files_are_an_error_not_a_crash() {
                let url = crate::embedded::testing::fresh_url($scheme, $query);
                let b = open_url(&url, true).unwrap();
                fill(&b, 50);
                drop(b);
                let dir = url.split_once("://").unwrap().1.split('?').next().unwrap();
                crate::embedded::testing::scribble(std::path::Path::new(dir));
                let e = open_url(&url, false).err().map(|e| e.to_string());
                assert!(e.as_deref().is_some_and(|e| !e.contains('\n')), "{e:?}");
            }

            #[test]
            fn impossible_options_are_one_clear_line() {
                let url = crate::embedded::testing::fresh_url($scheme, "?no_such_option=1");
                let e = open_url(&url, true).err().unwrap().to_string();
                assert!(e.contains("no_such_option"), "{e}");
            }
        }
    };
}
pub(crate) use engine_checks;

/// Overwrites every file under `dir` (but yardstick's lock) with garbage of
/// the same length, as a damaged disk or another program would.
pub(crate) fn scribble(dir: &std::path::Path) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            scribble(&p);
        } else if e.file_name() != "yardstick.lock" {
            let len = std::fs::metadata(&p).unwrap().len().max(64) as usize;
            let junk: Vec<u8> = (0..len).map(|i| (i * 7 + 13) as u8).collect();
            std::fs::write(&p, junk).unwrap();
        }
    }
}
