//! Tests of the generic layer, on an in-memory engine.
use super::*;
use std::collections::BTreeMap;
use std::sync::RwLock;

/// An in-memory engine, to test the generic layer without a library; it
/// counts its flushes.
#[derive(Default)]
struct Memory(
    Arc<RwLock<BTreeMap<Vec<u8>, Vec<u8>>>>,
    Arc<std::sync::atomic::AtomicUsize>,
);

impl Engine for Memory {
    type Handle = Memory;
    fn handle(&self) -> Result<Memory, BindingError> {
        Ok(Memory(self.0.clone(), self.1.clone()))
    }
    fn flush(&self) -> EngineResult<()> {
        self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }
    fn info(&self) -> EngineInfo {
        EngineInfo {
            name: "memory".into(),
            version: "1".into(),
            settings: BTreeMap::new(),
        }
    }
}

impl Handle for Memory {
    fn get(&mut self, key: &[u8], out: &mut Vec<u8>) -> EngineResult<bool> {
        // widen the window between the read and the write of a conditional op
        std::thread::yield_now();
        match self.0.read().unwrap().get(key) {
            Some(v) => {
                out.clone_from(v);
                Ok(true)
            }
            None => Ok(false),
        }
    }
    fn put(&mut self, key: &[u8], value: &[u8]) -> EngineResult<()> {
        self.0.write().unwrap().insert(key.to_vec(), value.to_vec());
        Ok(())
    }
    fn delete(&mut self, key: &[u8]) -> EngineResult<()> {
        self.0.write().unwrap().remove(key);
        Ok(())
    }
    fn scan(
        &mut self,
        start: &[u8],
        count: usize,
        row: &mut dyn FnMut(&[u8], &[u8]),
    ) -> EngineResult<()> {
        for (k, v) in self.0.read().unwrap().range(start.to_vec()..).take(count) {
            row(k, v);
        }
        Ok(())
    }
}

fn open_memory(opts: &OpenOptions) -> Result<KvBinding<Memory>, BindingError> {
    let url = testing::fresh_url("memory", "");
    let dir = Dir::open(&Target::parse(&url)?, opts, "memory")?;
    Ok(KvBinding::new(Memory::default(), dir, opts, "memory"))
}

yardstick_core::conformance_suite!(open_memory);

#[test]
fn concurrent_inserts_of_one_key_with_insert_semantics_let_exactly_one_win() {
    let opts = yardstick_core::conformance::options(InsertMode::Insert, UpdateMode::Update);
    let b = Arc::new(open_memory(&opts).unwrap());
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let b = b.clone();
            std::thread::spawn(move || {
                let rt = crate::testing::runtime();
                rt.block_on(async {
                    let mut s = b.session().await.unwrap();
                    let mut won = 0;
                    for k in 0..200 {
                        let mut ws = WriteSet::default();
                        ws.push(0).extend_from_slice(format!("t{t}").as_bytes());
                        let key = format!("key{k}");
                        if s.insert(key.as_bytes(), &ws).await.status() == Status::Ok {
                            won += 1;
                        }
                    }
                    won
                })
            })
        })
        .collect();
    let total: u32 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(total, 200, "each key must be inserted exactly once");
}

#[test]
fn concurrent_partial_updates_keep_every_field() {
    let opts = yardstick_core::conformance::options(InsertMode::Upsert, UpdateMode::Update);
    let b = Arc::new(open_memory(&opts).unwrap());
    let rt = crate::testing::runtime();
    rt.block_on(async {
        let mut s = b.session().await.unwrap();
        let mut ws = WriteSet::default();
        for f in 0..3 {
            ws.push(f).extend_from_slice(b"0");
        }
        s.insert(b"k", &ws).await;
    });
    let threads: Vec<_> = (0..3)
        .map(|field| {
            let b = b.clone();
            std::thread::spawn(move || {
                let rt = crate::testing::runtime();
                rt.block_on(async {
                    let mut s = b.session().await.unwrap();
                    for i in 1..=300u32 {
                        let mut ws = WriteSet::default();
                        ws.push(field).extend_from_slice(i.to_string().as_bytes());
                        assert_eq!(s.update(b"k", &ws).await.status(), Status::Ok);
                    }
                })
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    rt.block_on(async {
        let mut s = b.session().await.unwrap();
        let mut rec = Record::with_fields(3);
        s.read(b"k", Fields::All, &mut rec).await;
        for f in 0..3 {
            assert_eq!(rec.get(f), Some(&b"300"[..]), "field {f} lost an update");
        }
    });
}

#[test]
fn disk_usage_counts_allocated_blocks_not_apparent_size() {
    let dir = tempfile::tempdir().unwrap();
    let sparse = std::fs::File::create(dir.path().join("sparse")).unwrap();
    sparse.set_len(1 << 30).unwrap();
    std::fs::write(dir.path().join("dense"), vec![1u8; 1 << 16]).unwrap();
    let used = disk_usage(dir.path());
    assert!((1 << 16..1 << 20).contains(&used), "{used}");
}

#[test]
fn a_file_where_the_directory_should_be_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    let opts = yardstick_core::conformance::options(InsertMode::Insert, UpdateMode::Update);
    let t = Target::parse(&format!("memory://{}", file.display())).unwrap();
    let e = Dir::open(&t, &opts, "memory").err().unwrap().to_string();
    assert!(e.contains("is a file, not a directory"), "{e}");
    let t = Target::parse("memory://").unwrap();
    let e = Dir::open(&t, &opts, "memory").err().unwrap().to_string();
    assert!(e.contains("needs a directory"), "{e}");
}

#[test]
fn observation_reads_the_size_without_the_flush_between_phases() {
    let opts = yardstick_core::conformance::options(InsertMode::Insert, UpdateMode::Update);
    let b = open_memory(&opts).unwrap();
    let flushes = b.engine.1.clone();
    std::fs::write(b.dir.path.join("data"), [0u8; 5000]).unwrap();
    let size = b.data_size().unwrap();
    assert!(size >= 5000, "{size}");
    assert_eq!(flushes.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert_eq!(b.disk_bytes(), Some(size));
    assert_eq!(flushes.load(std::sync::atomic::Ordering::SeqCst), 1);
}
