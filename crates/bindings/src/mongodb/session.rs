//! A MongoDB session: one collection handle on the worker thread's client;
//! the operations, the batch load and emptying the collection.
use super::{Inner, DUPLICATE_KEY};
use futures_util::TryStreamExt;
use mongodb::bson::{doc, spec::BinarySubtype, Binary, Bson, Document};
use mongodb::error::{ErrorKind, WriteFailure};
use mongodb::Collection;
use std::sync::Arc;
use yardstick_core::binding::*;

pub(crate) struct MongoSession {
    pub(super) inner: Arc<Inner>,
    pub(super) coll: Collection<Document>,
}

fn status_of(e: &mongodb::error::Error) -> Status {
    match &*e.kind {
        ErrorKind::Write(WriteFailure::WriteError(w)) if w.code == DUPLICATE_KEY => {
            Status::DuplicateKey
        }
        ErrorKind::InsertMany(m)
            if m.write_errors
                .as_ref()
                .is_some_and(|w| w.iter().any(|w| w.code == DUPLICATE_KEY)) =>
        {
            Status::DuplicateKey
        }
        ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => Status::Timeout,
        ErrorKind::Io(_)
        | ErrorKind::ServerSelection { .. }
        | ErrorKind::ConnectionPoolCleared { .. } => Status::Unavailable,
        _ => Status::Error,
    }
}

fn failed(e: mongodb::error::Error) -> Outcome {
    match status_of(&e) {
        Status::DuplicateKey => Outcome::of(Status::DuplicateKey),
        s => Outcome::failed(s, error_text(&e)),
    }
}

/// A driver error in one line: the server's code, code name and message, or
/// the chain of causes.
fn error_text(e: &mongodb::error::Error) -> String {
    use yardstick_core::error::ServerError;
    match &*e.kind {
        ErrorKind::Command(c) => {
            ServerError::new("MongoDB error", format!("{} {}", c.code, c.code_name), &c.message)
                .to_string()
        }
        ErrorKind::Write(WriteFailure::WriteError(w)) => {
            ServerError::new("MongoDB error", w.code, &w.message).to_string()
        }
        _ => yardstick_core::error::chain(e),
    }
}

fn key_text(key: &[u8]) -> Result<&str, Outcome> {
    std::str::from_utf8(key).map_err(|_| {
        Outcome::failed(
            Status::Error,
            "MongoDB _id keys are strings: the key is not UTF-8",
        )
    })
}

fn binary(v: &[u8]) -> Bson {
    Bson::Binary(Binary {
        subtype: BinarySubtype::Generic,
        bytes: v.to_vec(),
    })
}

/// Copies the selected fields of `d` into `out`; returns the bytes copied.
fn copy_doc(d: &Document, names: &[String], fields: Fields, out: &mut Record) -> u64 {
    let mut bytes = 0;
    for (_, field) in fields.columns(names.len()) {
        let v = match d.get(&names[field]) {
            Some(Bson::Binary(b)) => b.bytes.as_slice(),
            Some(Bson::String(s)) => s.as_bytes(),
            _ => continue,
        };
        bytes += v.len() as u64;
        out.set(field, v);
    }
    bytes
}

impl MongoSession {
    /// The `update` command with one replacing upsert per record. The
    /// driver's collection API has no bulk upsert (its `bulkWrite` needs
    /// MongoDB 8), the command has been there since 2.6.
    async fn upsert_batch(&mut self, batch: &Batch) -> Outcome {
        let mut updates = Vec::with_capacity(batch.len());
        for (key, values) in batch.rows() {
            let k = match key_text(key) {
                Ok(k) => k,
                Err(o) => return o,
            };
            updates.push(doc! {"q": {"_id": k}, "u": self.record(k, values), "upsert": true});
        }
        let mut cmd = doc! {"update": self.coll.name(), "updates": updates, "ordered": false};
        if let Some(wc) = self.coll.write_concern() {
            match mongodb::bson::to_bson(wc) {
                Ok(wc) => cmd.insert("writeConcern", wc),
                Err(e) => return Outcome::failed(Status::Error, format!("write concern: {e}")),
            };
        }
        let db = self.coll.client().database(&self.inner.database);
        match db.run_command(cmd).await {
            Ok(reply) => {
                let errors = reply.get_array("writeErrors").map_or(&[][..], |w| w.as_slice());
                let failures = errors.len() as u64;
                let written = batch.len() as u64 - failures;
                if failures == 0 {
                    return Outcome::ok(written, batch.bytes());
                }
                let first = errors
                    .first()
                    .and_then(Bson::as_document)
                    .and_then(|d| d.get_str("errmsg").ok())
                    .unwrap_or("no message");
                Outcome::failed(
                    Status::Error,
                    format!("{failures} of {} upserts failed: {first}", batch.len()),
                )
                .with_rows(written)
            }
            Err(e) => failed(e),
        }
    }

    fn record(&self, key: &str, values: &WriteSet) -> Document {
        let mut d = Document::new();
        d.insert("_id", key);
        for (i, v) in values.iter() {
            d.insert(self.inner.fields[i].clone(), binary(v));
        }
        d
    }

    fn projection(&self, fields: Fields, with_id: bool) -> Document {
        let mut p = Document::new();
        if !with_id {
            p.insert("_id", 0);
        }
        for (_, f) in fields.columns(self.inner.fields.len()) {
            p.insert(self.inner.fields[f].clone(), 1);
        }
        p
    }
}

impl Session for MongoSession {
    async fn read(&mut self, key: &[u8], fields: Fields, out: &mut Record) -> Outcome {
        let key = match key_text(key) {
            Ok(k) => k,
            Err(o) => return o,
        };
        let projection = self.projection(fields, false);
        match self
            .coll
            .find_one(doc! {"_id": key})
            .projection(projection)
            .await
        {
            Ok(Some(d)) => Outcome::ok(1, copy_doc(&d, &self.inner.fields, fields, out)),
            Ok(None) => Outcome::of(Status::NotFound),
            Err(e) => failed(e),
        }
    }

    async fn scan(
        &mut self,
        start: &[u8],
        count: u64,
        fields: Fields,
        out: &mut ScanRows,
    ) -> Outcome {
        let start = match key_text(start) {
            Ok(k) => k,
            Err(o) => return o,
        };
        let projection = self.projection(fields, true);
        let mut cursor = match self
            .coll
            .find(doc! {"_id": {"$gte": start}})
            .sort(doc! {"_id": 1})
            .limit(count.min(i64::MAX as u64) as i64)
            .projection(projection)
            .await
        {
            Ok(c) => c,
            Err(e) => return failed(e),
        };
        let (mut n, mut bytes) = (0, 0);
        loop {
            match cursor.try_next().await {
                Ok(Some(d)) => {
                    let id = d.get_str("_id").unwrap_or_default().to_string();
                    bytes += copy_doc(&d, &self.inner.fields, fields, out.push(id.as_bytes()));
                    n += 1;
                }
                Ok(None) => break,
                Err(e) => return failed(e),
            }
        }
        Outcome::ok(n, bytes)
    }

    async fn update(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        let key = match key_text(key) {
            Ok(k) => k,
            Err(o) => return o,
        };
        let mut set = Document::new();
        for (i, v) in values.iter() {
            set.insert(self.inner.fields[i].clone(), binary(v));
        }
        let upsert = self.inner.update_mode == UpdateMode::Upsert;
        match self
            .coll
            .update_one(doc! {"_id": key}, doc! {"$set": set})
            .upsert(upsert)
            .await
        {
            Ok(r) if r.matched_count == 0 && r.upserted_id.is_none() => {
                Outcome::of(Status::NotFound)
            }
            Ok(_) => Outcome::ok(0, values.bytes()),
            Err(e) => failed(e),
        }
    }

    async fn insert(&mut self, key: &[u8], values: &WriteSet) -> Outcome {
        let key = match key_text(key) {
            Ok(k) => k,
            Err(o) => return o,
        };
        let d = self.record(key, values);
        let result = match self.inner.insert_mode {
            InsertMode::Insert => self.coll.insert_one(d).await.map(|_| ()),
            InsertMode::Upsert => self
                .coll
                .replace_one(doc! {"_id": key}, d)
                .upsert(true)
                .await
                .map(|_| ()),
        };
        match result {
            Ok(()) => Outcome::ok(0, values.bytes()),
            Err(e) => failed(e),
        }
    }

    async fn delete(&mut self, key: &[u8]) -> Outcome {
        let key = match key_text(key) {
            Ok(k) => k,
            Err(o) => return o,
        };
        match self.coll.delete_one(doc! {"_id": key}).await {
            Ok(r) if r.deleted_count == 0 => Outcome::of(Status::NotFound),
            Ok(_) => Outcome::ok(0, 0),
            Err(e) => failed(e),
        }
    }

    /// `deleteMany({})`: the server deletes, the collection keeps its
    /// indexes, options and sharding (a drop would lose them).
    async fn clear(&mut self) -> Result<Option<u64>, BindingError> {
        match self.coll.delete_many(doc! {}).await {
            Ok(r) => Ok(Some(r.deleted_count)),
            Err(e) => Err(BindingError::Io(format!(
                "cannot empty collection {}: {}",
                self.coll.name(),
                error_text(&e)
            ))),
        }
    }

    /// `insertMany` (unordered) with insert semantics: one round trip per
    /// batch, every record that does not collide is written. With upsert
    /// semantics, one `update` command of replacing upserts (unordered), as
    /// YCSB's binding bulk-writes them: also one round trip per batch.
    async fn insert_batch(&mut self, batch: &Batch) -> Outcome {
        if batch.is_empty() {
            return Outcome::ok(0, 0);
        }
        if self.inner.insert_mode == InsertMode::Upsert {
            return self.upsert_batch(batch).await;
        }
        let mut docs = Vec::with_capacity(batch.len());
        for (key, values) in batch.rows() {
            match key_text(key) {
                Ok(k) => docs.push(self.record(k, values)),
                Err(o) => return o,
            }
        }
        match self.coll.insert_many(docs).ordered(false).await {
            Ok(r) => Outcome::ok(r.inserted_ids.len() as u64, batch.bytes()),
            Err(e) => {
                let written = match &*e.kind {
                    ErrorKind::InsertMany(m) => {
                        batch.len() as u64 - m.write_errors.as_ref().map_or(0, |w| w.len() as u64)
                    }
                    _ => 0,
                };
                let mut o = failed(e);
                o.set_rows(written);
                o
            }
        }
    }
}
