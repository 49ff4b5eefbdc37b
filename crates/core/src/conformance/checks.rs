//! The conformance checks, one function per behaviour a binding must have;
//! [`super::run_check`] runs one by name.
use super::*;

pub(super) async fn crud<B: Binding>(
    open: &dyn Fn(&OpenOptions) -> Result<B, BindingError>,
) -> CheckResult {
    let (_b, mut s) = session(open, &options(InsertMode::Insert, UpdateMode::Update)).await?;
    let v = values(&[(0, b"zero"), (1, b"one"), (2, b"two")]);
    expect_status(
        "insert",
        s.insert(b"a-crud-1", &v).await.status(),
        Status::Ok,
    )?;
    let (st, rec) = read_all(&mut s, b"a-crud-1").await;
    expect_status("read after insert", st, Status::Ok)?;
    for (i, want) in [&b"zero"[..], b"one", b"two"].iter().enumerate() {
        ensure!(
            rec.get(i) == Some(*want),
            "read field{i}: expected {:?}, got {:?}",
            want,
            rec.get(i)
        );
    }
    let mut one = Record::with_fields(3);
    let out = s.read(b"a-crud-1", Fields::One(1), &mut one).await;
    expect_status("read one field", out.status(), Status::Ok)?;
    ensure!(
        one.get(1) == Some(&b"one"[..]) && one.len() == 1,
        "read of field1 returned {:?}",
        one.present().collect::<Vec<_>>()
    );
    expect_status(
        "update",
        s.update(b"a-crud-1", &values(&[(1, b"uno")]))
            .await
            .status(),
        Status::Ok,
    )?;
    let (_, rec) = read_all(&mut s, b"a-crud-1").await;
    ensure!(
        rec.get(1) == Some(&b"uno"[..]) && rec.get(0) == Some(&b"zero"[..]),
        "update changed the wrong fields: {:?}",
        rec.present().collect::<Vec<_>>()
    );
    expect_status("delete", s.delete(b"a-crud-1").await.status(), Status::Ok)?;
    expect_status(
        "read after delete",
        read_all(&mut s, b"a-crud-1").await.0,
        Status::NotFound,
    )?;
    Ok(())
}

pub(super) async fn missing_keys<B: Binding>(
    open: &dyn Fn(&OpenOptions) -> Result<B, BindingError>,
) -> CheckResult {
    let (_b, mut s) = session(open, &options(InsertMode::Insert, UpdateMode::Update)).await?;
    expect_status(
        "read of a missing key",
        read_all(&mut s, b"a-missing").await.0,
        Status::NotFound,
    )?;
    expect_status(
        "update of a missing key",
        s.update(b"a-missing", &values(&[(0, b"x")])).await.status(),
        Status::NotFound,
    )?;
    expect_status(
        "delete of a missing key",
        s.delete(b"a-missing").await.status(),
        Status::NotFound,
    )?;
    expect_status(
        "read after failed update",
        read_all(&mut s, b"a-missing").await.0,
        Status::NotFound,
    )?;
    Ok(())
}

pub(super) async fn insert_semantics<B: Binding>(
    open: &dyn Fn(&OpenOptions) -> Result<B, BindingError>,
) -> CheckResult {
    let first = values(&[(0, b"first"), (1, b"first"), (2, b"first")]);
    let second = values(&[(0, b"second"), (1, b"second"), (2, b"second")]);
    {
        let (_b, mut s) = session(open, &options(InsertMode::Insert, UpdateMode::Update)).await?;
        expect_status(
            "insert",
            s.insert(b"a-dup", &first).await.status(),
            Status::Ok,
        )?;
        expect_status(
            "duplicate insert (insert semantics)",
            s.insert(b"a-dup", &second).await.status(),
            Status::DuplicateKey,
        )?;
        let (_, rec) = read_all(&mut s, b"a-dup").await;
        ensure!(
            rec.get(0) == Some(&b"first"[..]),
            "a refused duplicate insert changed the record"
        );
    }
    {
        let (_b, mut s) = session(open, &options(InsertMode::Upsert, UpdateMode::Update)).await?;
        expect_status(
            "insert (upsert semantics)",
            s.insert(b"a-ups", &first).await.status(),
            Status::Ok,
        )?;
        expect_status(
            "duplicate insert (upsert semantics)",
            s.insert(b"a-ups", &second).await.status(),
            Status::Ok,
        )?;
        let (_, rec) = read_all(&mut s, b"a-ups").await;
        ensure!(
            rec.get(2) == Some(&b"second"[..]),
            "upsert did not replace the record: {:?}",
            rec.get(2)
        );
    }
    Ok(())
}

pub(super) async fn update_semantics<B: Binding>(
    open: &dyn Fn(&OpenOptions) -> Result<B, BindingError>,
) -> CheckResult {
    let (_b, mut s) = session(open, &options(InsertMode::Insert, UpdateMode::Upsert)).await?;
    expect_status(
        "upsert-update of a missing key",
        s.update(b"a-upd", &values(&[(0, b"new")])).await.status(),
        Status::Ok,
    )?;
    let mut rec = Record::with_fields(3);
    let out = s.read(b"a-upd", Fields::One(0), &mut rec).await;
    expect_status("read after upsert-update", out.status(), Status::Ok)?;
    ensure!(
        rec.get(0) == Some(&b"new"[..]),
        "upsert-update did not write: {:?}",
        rec.get(0)
    );
    expect_status(
        "upsert-update of an existing key",
        s.update(b"a-upd", &values(&[(0, b"newer")])).await.status(),
        Status::Ok,
    )?;
    let out = s.read(b"a-upd", Fields::One(0), &mut rec).await;
    ensure!(
        out.status() == Status::Ok && rec.get(0) == Some(&b"newer"[..]),
        "second upsert-update lost"
    );
    Ok(())
}

pub(super) async fn scan<B: Binding>(
    open: &dyn Fn(&OpenOptions) -> Result<B, BindingError>,
) -> CheckResult {
    let opts = OpenOptions {
        scans: true,
        ..options(InsertMode::Insert, UpdateMode::Update)
    };
    let (_b, mut s) = session(open, &opts).await?;
    // inserted out of order; keys sort after every other check's keys
    for i in [3u32, 9, 0, 5, 1, 7, 2, 8, 6, 4] {
        let key = format!("zz-scan-{i:03}");
        let v = values(&[(0, key.as_bytes()), (1, b"f1"), (2, b"f2")]);
        expect_status(
            "insert for scan",
            s.insert(key.as_bytes(), &v).await.status(),
            Status::Ok,
        )?;
    }
    let mut rows = ScanRows::with_fields(3);
    let out = s.scan(b"zz-scan-004", 3, Fields::All, &mut rows).await;
    expect_status("scan", out.status(), Status::Ok)?;
    let keys: Vec<String> = rows
        .rows()
        .map(|(k, _)| String::from_utf8_lossy(k).into_owned())
        .collect();
    ensure!(
        keys == ["zz-scan-004", "zz-scan-005", "zz-scan-006"],
        "scan from zz-scan-004 for 3 returned {keys:?}"
    );
    ensure!(
        out.rows() == 3,
        "scan reported {} rows for 3 returned",
        out.rows()
    );
    for (k, r) in rows.rows() {
        ensure!(
            r.get(0) == Some(k) && r.get(2) == Some(&b"f2"[..]),
            "scan row {} has wrong values",
            String::from_utf8_lossy(k)
        );
    }
    rows.clear();
    let out = s
        .scan(b"zz-scan-0035", 100, Fields::One(1), &mut rows)
        .await;
    let keys: Vec<String> = rows
        .rows()
        .map(|(k, _)| String::from_utf8_lossy(k).into_owned())
        .collect();
    ensure!(
        out.status() == Status::Ok
            && keys.len() == 6
            && keys[0] == "zz-scan-004"
            && keys[5] == "zz-scan-009",
        "scan past the end returned {keys:?}"
    );
    for (_, r) in rows.rows() {
        ensure!(
            r.get(1) == Some(&b"f1"[..]) && r.len() == 1,
            "scan of one field returned {:?}",
            r.present().collect::<Vec<_>>()
        );
    }
    rows.clear();
    let out = s.scan(b"zz-scan-999", 5, Fields::All, &mut rows).await;
    ensure!(
        out.status() == Status::Ok && rows.is_empty() && out.rows() == 0,
        "scan after the last key returned rows or failed: {:?}",
        out.status()
    );
    Ok(())
}

pub(super) fn batch_of(keys: &[&str], tag: &[u8]) -> Batch {
    let mut b = Batch::default();
    for k in keys {
        let (key, values) = b.push();
        key.extend_from_slice(k.as_bytes());
        for f in 0..3 {
            let v = values.push(f);
            v.extend_from_slice(tag);
            v.extend_from_slice(k.as_bytes());
        }
    }
    b
}

pub(super) async fn batch_insert<B: Binding>(
    open: &dyn Fn(&OpenOptions) -> Result<B, BindingError>,
) -> CheckResult {
    let keys = [
        "a-batch-3",
        "a-batch-1",
        "a-batch-5",
        "a-batch-2",
        "a-batch-4",
    ];
    {
        let (_b, mut s) = session(open, &options(InsertMode::Insert, UpdateMode::Update)).await?;
        let out = s.insert_batch(&batch_of(&keys, b"v1-")).await;
        expect_status("batch insert", out.status(), Status::Ok)?;
        ensure!(
            out.rows() == 5,
            "batch insert of 5 reported {} rows",
            out.rows()
        );
        for k in keys {
            let (st, rec) = read_all(&mut s, k.as_bytes()).await;
            expect_status("read after batch insert", st, Status::Ok)?;
            let want = format!("v1-{k}");
            ensure!(
                (0..3).all(|f| rec.get(f) == Some(want.as_bytes())),
                "record {k} of a batch came back as {:?}",
                rec.present().collect::<Vec<_>>()
            );
        }
        let out = s
            .insert_batch(&batch_of(&["a-batch-6", "a-batch-1"], b"v2-"))
            .await;
        expect_status(
            "batch with an existing key (insert semantics)",
            out.status(),
            Status::DuplicateKey,
        )?;
        let (_, rec) = read_all(&mut s, b"a-batch-1").await;
        ensure!(
            rec.get(0) == Some(&b"v1-a-batch-1"[..]),
            "a refused batch changed an existing record"
        );
    }
    let (_b, mut s) = session(open, &options(InsertMode::Upsert, UpdateMode::Update)).await?;
    let out = s
        .insert_batch(&batch_of(&["a-batch-1", "a-batch-7"], b"v3-"))
        .await;
    expect_status(
        "batch upsert over an existing key",
        out.status(),
        Status::Ok,
    )?;
    ensure!(
        out.rows() == 2,
        "a batch upsert of 2 records reported {} rows written",
        out.rows()
    );
    for k in ["a-batch-1", "a-batch-7"] {
        let (st, rec) = read_all(&mut s, k.as_bytes()).await;
        let want = format!("v3-{k}");
        ensure!(
            st == Status::Ok && rec.get(2) == Some(want.as_bytes()),
            "batch upsert did not write {k}: {:?}",
            rec.get(2)
        );
    }
    Ok(())
}

/// For a binding that cannot scan: a workload with scans is refused when the
/// binding opens, with a message that names scans, instead of failing per operation.
pub(super) fn scans_refused<B: Binding>(
    open: &dyn Fn(&OpenOptions) -> Result<B, BindingError>,
) -> CheckResult {
    let opts = OpenOptions {
        scans: true,
        ..options(InsertMode::Insert, UpdateMode::Update)
    };
    match open(&opts) {
        Ok(_) => Err("opened for a workload with scans, which it cannot run".into()),
        Err(BindingError::Unsupported(m)) if m.to_ascii_lowercase().contains("scan") => Ok(()),
        Err(e) => Err(format!(
            "refused scans with the wrong error: {e:?} (want Unsupported naming scans)"
        )),
    }
}

pub(super) async fn large_and_empty_values<B: Binding>(
    open: &dyn Fn(&OpenOptions) -> Result<B, BindingError>,
) -> CheckResult {
    let (_b, mut s) = session(open, &options(InsertMode::Insert, UpdateMode::Update)).await?;
    let big: Vec<u8> = (0..1_048_576u32).map(|i| b' ' + (i % 64) as u8).collect();
    let v = values(&[(0, &big), (1, b""), (2, b"x")]);
    expect_status(
        "insert of 1 MiB and empty values",
        s.insert(b"a-big", &v).await.status(),
        Status::Ok,
    )?;
    let (st, rec) = read_all(&mut s, b"a-big").await;
    expect_status("read of large value", st, Status::Ok)?;
    ensure!(
        rec.get(0) == Some(big.as_slice()),
        "1 MiB value came back different ({} bytes)",
        rec.get(0).map_or(0, |v| v.len())
    );
    ensure!(
        rec.get(1) == Some(&b""[..]),
        "empty value came back as {:?}",
        rec.get(1)
    );
    Ok(())
}

pub(super) async fn data_integrity<B: Binding>(
    open: &dyn Fn(&OpenOptions) -> Result<B, BindingError>,
) -> CheckResult {
    let mut props = Properties::new();
    for kv in [
        "recordcount=20",
        "fieldcount=3",
        "fieldlength=50",
        "dataintegrity=true",
        "readproportion=1",
        "updateproportion=0",
    ] {
        props.set_override(kv).map_err(|e| e.to_string())?;
    }
    let shared = SharedState::new(CoreConfig::from_properties(&props).map_err(|e| e.to_string())?);
    let mut stream = Stream::new(&shared, 1);
    let (_b, mut s) = session(open, &options(InsertMode::Insert, UpdateMode::Update)).await?;
    let mut key = Vec::new();
    let mut ws = WriteSet::default();
    while let Some(op) = stream.next_load_op(&shared) {
        stream.key(&shared, op.keynum, &mut key);
        stream.values(&shared, &key, Fields::All, &mut ws);
        expect_status(
            "load with dataintegrity",
            s.insert(&key, &ws).await.status(),
            Status::Ok,
        )?;
    }
    let mut rec = Record::with_fields(3);
    for n in 0..20 {
        stream.key(&shared, n, &mut key);
        rec.clear();
        expect_status(
            "read",
            s.read(&key, Fields::All, &mut rec).await.status(),
            Status::Ok,
        )?;
        ensure!(
            stream.verify(&shared, &key, Fields::All, &rec),
            "record {n} does not verify"
        );
    }
    stream.key(&shared, 7, &mut key);
    expect_status(
        "corrupting update",
        s.update(&key, &values(&[(2, b"not the value YCSB would write")]))
            .await
            .status(),
        Status::Ok,
    )?;
    rec.clear();
    s.read(&key, Fields::All, &mut rec).await;
    ensure!(
        !stream.verify(&shared, &key, Fields::All, &rec),
        "a corrupted record still verifies"
    );
    Ok(())
}

/// Random values handed over owed (see [`WriteSet`]): a record reads back
/// as the set holds them once made, whether the binding made them where it
/// sent them or read them from the set, and a second call with the same
/// set (a retry) stores the first's bytes. In a one-field schema (a whole
/// record, sent as it is) and in the checks' three fields.
pub(super) async fn owed_values<B: Binding>(
    open: &dyn Fn(&OpenOptions) -> Result<B, BindingError>,
) -> CheckResult {
    for fields in [1usize, 3] {
        let mut props = Properties::new();
        let count = format!("fieldcount={fields}");
        for kv in [
            "recordcount=4",
            &count,
            "fieldlength=1000",
            "readproportion=1",
            "updateproportion=0",
        ] {
            props.set_override(kv).map_err(|e| e.to_string())?;
        }
        let shared =
            SharedState::new(CoreConfig::from_properties(&props).map_err(|e| e.to_string())?);
        let mut stream = Stream::new(&shared, 2);
        let opts = OpenOptions {
            schema: schema(fields),
            ..options(InsertMode::Insert, UpdateMode::Update)
        };
        let (_b, mut s) = session(open, &opts).await?;
        let (mut key, mut ws) = (Vec::new(), WriteSet::owing());
        for n in 0..4 {
            stream.key(&shared, n, &mut key);
            stream.values(&shared, &key, Fields::All, &mut ws);
            let what = format!("insert of owed values, {fields} field(s)");
            expect_status(&what, s.insert(&key, &ws).await.status(), Status::Ok)?;
            stored_as(&mut s, &key, &ws, &what).await?;
            stream.values(&shared, &key, Fields::All, &mut ws);
            for _ in 0..2 {
                let what = format!("update of owed values, {fields} field(s)");
                expect_status(&what, s.update(&key, &ws).await.status(), Status::Ok)?;
            }
            stored_as(&mut s, &key, &ws, "update of owed values, sent twice").await?;
        }
    }
    Ok(())
}

/// Record `key` reads back as `ws` holds its values (made now, if owed).
async fn stored_as<S: Session>(s: &mut S, key: &[u8], ws: &WriteSet, what: &str) -> CheckResult {
    let (st, rec) = read_all(s, key).await;
    expect_status(&format!("read after the {what}"), st, Status::Ok)?;
    for (i, v) in ws.iter() {
        ensure!(
            rec.get(i) == Some(v),
            "{what}: field {i} read back as {} bytes, not the set's {} (first {:?}, not {:?})",
            rec.get(i).map_or(0, |r| r.len()),
            v.len(),
            rec.get(i)
                .map(|r| String::from_utf8_lossy(&r[..r.len().min(16)]).into_owned()),
            String::from_utf8_lossy(&v[..v.len().min(16)])
        );
    }
    Ok(())
}

/// `clear` empties the table: loaded keys read as not found, a scan from the
/// first key finds nothing, and the table takes inserts again.
pub(super) async fn clear<B: Binding>(
    open: &dyn Fn(&OpenOptions) -> Result<B, BindingError>,
) -> CheckResult {
    let opts = OpenOptions {
        scans: true,
        ..options(InsertMode::Insert, UpdateMode::Update)
    };
    let (_b, mut s) = session(open, &opts).await?;
    let keys: Vec<String> = (0..25).map(|i| format!("clear-{i:03}")).collect();
    for k in &keys {
        let v = values(&[(0, b"a"), (1, b"b"), (2, b"c")]);
        expect_status(
            "insert before clear",
            s.insert(k.as_bytes(), &v).await.status(),
            Status::Ok,
        )?;
    }
    let deleted = s.clear().await.map_err(|e| format!("clear failed: {e}"))?;
    ensure!(
        deleted.is_none_or(|n| n >= keys.len() as u64),
        "clear reported {deleted:?} records deleted, but {} were stored",
        keys.len()
    );
    for k in &keys {
        expect_status(
            "read after clear",
            read_all(&mut s, k.as_bytes()).await.0,
            Status::NotFound,
        )?;
    }
    let mut rows = ScanRows::with_fields(3);
    let out = s.scan(b"", 10, Fields::All, &mut rows).await;
    expect_status("scan after clear", out.status(), Status::Ok)?;
    ensure!(
        rows.is_empty(),
        "a scan after clear returned {} rows",
        rows.len()
    );
    let v = values(&[(0, b"again")]);
    expect_status(
        "insert after clear",
        s.insert(keys[0].as_bytes(), &v).await.status(),
        Status::Ok,
    )?;
    let (st, rec) = read_all(&mut s, keys[0].as_bytes()).await;
    expect_status("read of the key inserted after clear", st, Status::Ok)?;
    ensure!(
        rec.get(0) == Some(&b"again"[..]),
        "the key inserted after clear reads {:?}",
        rec.get(0)
    );
    // clearing an empty table is not an error
    let _ = s.delete(keys[0].as_bytes()).await;
    s.clear()
        .await
        .map_err(|e| format!("clear of an empty table failed: {e}"))?;
    Ok(())
}

/// A binding that cannot list its keys refuses `clear` with a message, and
/// deletes nothing.
pub(super) async fn clear_refused<B: Binding>(
    open: &dyn Fn(&OpenOptions) -> Result<B, BindingError>,
) -> CheckResult {
    let (_b, mut s) = session(open, &options(InsertMode::Insert, UpdateMode::Update)).await?;
    let v = values(&[(0, b"kept")]);
    expect_status(
        "insert",
        s.insert(b"clear-kept", &v).await.status(),
        Status::Ok,
    )?;
    match s.clear().await {
        Ok(n) => Err(format!(
            "clear of a binding without scans returned Ok({n:?})"
        )),
        Err(e) => {
            ensure!(
                !e.to_string().trim().is_empty(),
                "clear was refused without a message"
            );
            expect_status(
                "read after a refused clear",
                read_all(&mut s, b"clear-kept").await.0,
                Status::Ok,
            )
        }
    }
}
