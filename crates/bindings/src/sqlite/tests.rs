//! Tests of the SQLite binding: the conformance suite, file and option
//! handling, and the settings recorded in results.
use super::*;

fn open_fresh(opts: &OpenOptions) -> Result<SqliteBinding, BindingError> {
    // each call gets its own directory, kept for the test process's life
    let dir = crate::testing::scratch_dir().join(crate::testing::unique_name("sqlite"));
    std::fs::create_dir_all(&dir).map_err(|e| BindingError::Io(e.to_string()))?;
    let url = format!("sqlite://{}/conformance.db", dir.display());
    SqliteBinding::open(&Target::parse(&url).unwrap(), opts)
}

yardstick_core::conformance_suite!(open_fresh);

fn opts(create: bool, fields: usize) -> OpenOptions {
    OpenOptions {
        schema: Schema {
            table: "usertable".into(),
            fields: (0..fields).map(|i| format!("field{i}")).collect(),
        },
        insert_mode: InsertMode::Insert,
        update_mode: UpdateMode::Update,
        create,
        sessions: 1,
        data_integrity: false,
        scans: true,
    }
}

#[test]
fn unloaded_or_mismatched_databases_are_explained() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/x.db", dir.path().display());
    let e = SqliteBinding::open(&Target::parse(&url).unwrap(), &opts(false, 3))
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("does not exist") && e.contains("yardstick load"),
        "{e}"
    );
    let b = SqliteBinding::open(&Target::parse(&url).unwrap(), &opts(true, 3)).unwrap();
    assert_eq!(b.info().name, "sqlite");
    assert!(b.info().version.starts_with('3'));
    assert!(b.disk_bytes().unwrap() > 0);
    let e = SqliteBinding::open(&Target::parse(&url).unwrap(), &opts(false, 5))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("has no column field3"), "{e}");
    let e = SqliteBinding::open(
        &Target::parse("sqlite:///no/such/dir/x.db").unwrap(),
        &opts(true, 3),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("does not exist"), "{e}");
    let e = SqliteBinding::open(
        &Target::parse(&format!("{url}?synchronous=sometimes")).unwrap(),
        &opts(true, 3),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("synchronous"), "{e}");
}

#[test]
fn read_only_directory_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let mut perm = std::fs::metadata(&ro).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o555);
    std::fs::set_permissions(&ro, perm).unwrap();
    // root ignores directory permissions; only check when they apply
    if std::fs::File::create(ro.join("probe")).is_err() {
        let url = format!("sqlite://{}/x.db", ro.display());
        let e = SqliteBinding::open(&Target::parse(&url).unwrap(), &opts(true, 3))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("cannot open SQLite database"), "{e}");
    }
}

#[test]
fn processes_opening_one_new_file_together_all_get_wal() {
    // the instances of one load open the same new file at once; the
    // journal-mode switch must wait for the others, not fail as locked
    for round in 0..20 {
        let dir = tempfile::tempdir().unwrap();
        let url = format!(
            "sqlite://{}/race{round}.db?busy_timeout=10s",
            dir.path().display()
        );
        let (path, s) = settings_of(&Target::parse(&url).unwrap()).unwrap();
        let start = std::sync::Arc::new(std::sync::Barrier::new(6));
        let threads: Vec<_> = (0..6)
            .map(|_| {
                let (path, s, start) = (path.clone(), s.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    connect(&path, &s, true).map(|c| {
                        c.query_row("PRAGMA journal_mode", [], |r| r.get::<_, String>(0))
                            .unwrap()
                    })
                })
            })
            .collect();
        for t in threads {
            match t.join().unwrap() {
                Ok(mode) => assert_eq!(mode, "wal"),
                Err(e) => panic!("round {round}: {e}"),
            }
        }
    }
}
