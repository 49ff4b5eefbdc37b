//! A batch of inserts as one pipeline of the driver's: every record's write
//! goes out before the first reply is read (one round trip).
use super::RedisSession;
use crate::redis::*;

impl RedisSession {
    /// The records of `batch` written in one pipeline (one write each on a
    /// cluster, whose records live on different slots). Not atomic: the
    /// outcome counts the records written and reports the first refusal.
    pub(super) async fn write_batch(&mut self, batch: &Batch) -> Outcome {
        if batch.is_empty() {
            return Outcome::ok(0, 0);
        }
        if self.inner.is_cluster() {
            // records of a batch live on different slots: one write each
            let mut inserted = 0;
            for (key, values) in batch.rows() {
                let o = match self.inner.model {
                    Model::Hash => Box::pin(self.write_hash(key, values, true)).await,
                    Model::String => self.write_string(key, values, true).await,
                };
                if !o.status().is_ok() {
                    return o.with_rows(inserted);
                }
                inserted += 1;
            }
            return Outcome::ok(inserted, batch.bytes());
        }
        if let Err(o) = self.connected().await {
            return o;
        }
        let inner = self.inner.clone();
        let n = inner.field_names.len();
        let upsert = inner.insert_mode == InsertMode::Upsert;
        let script = if upsert {
            &inner.scripts.upsert
        } else {
            &inner.scripts.insert_nx
        };
        let mut pipe = redis::pipe();
        for (key, values) in batch.rows() {
            let mut full = inner.prefix.clone();
            full.extend_from_slice(key);
            match inner.model {
                Model::Hash => {
                    let c = pipe
                        .cmd("EVALSHA")
                        .arg(script.get_hash())
                        .arg(2)
                        .arg(full)
                        .arg(&inner.index[..])
                        .arg(key);
                    for (i, v) in values.iter() {
                        c.arg(&inner.field_names[i][..]).arg(v);
                    }
                }
                Model::String => {
                    kv::encode(n, values, &mut self.value);
                    let c = pipe.cmd("SET").arg(full).arg(&self.value[..]);
                    if !upsert {
                        c.arg("NX");
                    }
                }
            }
        }
        let mut loaded = false;
        if inner.model == Model::Hash && !self.batch_script_loaded {
            let con = self.con.as_deref_mut().expect("connected above");
            if let Err(e) = script.load_async(con).await {
                return self.failed(e);
            }
            self.batch_script_loaded = true;
            loaded = true;
        }
        let replies: Vec<Value> = loop {
            let con = self.con.as_deref_mut().expect("connected above");
            match pipe.query_async(con).await {
                Ok(r) => break r,
                // the server lost its script cache (restarted): load it once more
                Err(e)
                    if !loaded
                        && e.kind()
                            == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) =>
                {
                    loaded = true;
                    let con = self.con.as_deref_mut().expect("connected above");
                    if let Err(e) = script.load_async(con).await {
                        return self.failed(e);
                    }
                }
                Err(e) => return self.failed(e),
            }
        };
        let written = replies
            .iter()
            .filter(|r| matches!(r, Value::Int(1) | Value::Okay))
            .count() as u64;
        if written == batch.len() as u64 {
            Outcome::ok(written, batch.bytes())
        } else {
            Outcome::new(Status::DuplicateKey, written, 0)
        }
    }

}
