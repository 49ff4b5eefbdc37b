//! The SQL texts of YCSB's table layout (`usertable`, `YCSB_KEY` primary key,
//! one column per field), built once per run for one SQL dialect, and the
//! dialect's form of statements written portably (TPC-C's, with `?`
//! placeholders and `FOR UPDATE`). The SQL bindings differ only in
//! placeholders, upsert syntax and row locks, so that is all a [`Dialect`] says.
// each SQL binding uses its part of the dialect layer: a build with only
// some of them leaves the rest unused
#![cfg_attr(
    not(all(feature = "sqlite", feature = "postgres", feature = "mysql")),
    allow(dead_code)
)]
use std::fmt::Write as _;
use yardstick_core::binding::{InsertMode, UpdateMode};

/// Checks that an existing table has a column for every field (names compare
/// case-insensitively); `table` names it in the message, with its location.
pub(crate) fn check_columns(
    table: &str,
    fields: &[String],
    existing: &[String],
) -> Result<(), yardstick_core::binding::BindingError> {
    let missing: Vec<&str> = fields
        .iter()
        .filter(|f| !existing.iter().any(|c| c.eq_ignore_ascii_case(f)))
        .map(String::as_str)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(yardstick_core::binding::BindingError::Config(format!(
        "table {table} has no column {}: it was loaded with other fieldcount/fieldnameprefix; load again or use the same properties",
        missing.join(", ")
    )))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placeholder {
    /// `$1, $2` (PostgreSQL)
    Dollar,
    /// `?1, ?2` (SQLite)
    NumberedQuestion,
    /// `?, ?` (MySQL), bound in order
    Question,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upsert {
    /// `INSERT ... ON CONFLICT (YCSB_KEY) DO UPDATE SET c = EXCLUDED.c`
    OnConflict,
    /// `INSERT ... ON DUPLICATE KEY UPDATE c = VALUES(c)`
    OnDuplicateKey,
    /// `REPLACE INTO ...` for whole-record upserts (delete + insert);
    /// subset upserts still use `ON DUPLICATE KEY UPDATE`, since REPLACE would
    /// drop the fields not written.
    Replace,
    /// `UPSERT INTO ...` (CockroachDB)
    UpsertInto,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dialect {
    pub placeholder: Placeholder,
    pub upsert: Upsert,
    /// Whether `SELECT ... FOR UPDATE` locks rows (SQLite has no row locks:
    /// its writers take the database lock, and the clause is a syntax error).
    pub row_locks: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WriteKind {
    Insert,
    Upsert,
    Update,
}

impl WriteKind {
    /// What an insert runs under the run's insert semantics.
    pub(crate) fn for_insert(mode: InsertMode) -> WriteKind {
        match mode {
            InsertMode::Insert => WriteKind::Insert,
            InsertMode::Upsert => WriteKind::Upsert,
        }
    }

    /// What an update runs under the run's update semantics.
    pub(crate) fn for_update(mode: UpdateMode) -> WriteKind {
        match mode {
            UpdateMode::Update => WriteKind::Update,
            UpdateMode::Upsert => WriteKind::Upsert,
        }
    }
}

/// Statement texts for one table and dialect. Parameter 1 is always the key;
/// writes bind the values next, in column order; scans bind the limit second.
#[derive(Debug)]
pub(crate) struct Statements {
    pub read_all: String,
    pub read_one: Vec<String>,
    pub scan_all: String,
    pub scan_one: Vec<String>,
    pub insert_all: String,
    pub upsert_all: String,
    pub update_one: Vec<String>,
    pub upsert_one: Vec<String>,
    pub delete: String,
    pub table: String,
    pub fields: Vec<String>,
    dialect: Dialect,
}

impl Dialect {
    /// `sql`, written with `?` placeholders and `FOR UPDATE` where a
    /// transaction locks the rows it reads to change, in this dialect: the
    /// placeholders numbered where the dialect numbers them (outside quoted
    /// literals), `FOR UPDATE` dropped where it has no row locks.
    pub(crate) fn statement(&self, sql: &str) -> String {
        let sql = if self.row_locks {
            sql.to_string()
        } else {
            sql.replace(" FOR UPDATE", "")
        };
        if self.placeholder == Placeholder::Question {
            return sql;
        }
        let mut out = String::with_capacity(sql.len() + 16);
        let mut n = 0;
        let mut quoted = false;
        for c in sql.chars() {
            if c == '\'' {
                quoted = !quoted;
            }
            if c == '?' && !quoted {
                n += 1;
                out.push_str(&self.param(n));
            } else {
                out.push(c);
            }
        }
        out
    }

    /// Placeholder of parameter `n` (1-based).
    pub(crate) fn param(&self, n: usize) -> String {
        match self.placeholder {
            Placeholder::Dollar => format!("${n}"),
            Placeholder::NumberedQuestion => format!("?{n}"),
            Placeholder::Question => "?".into(),
        }
    }

    fn params(&self, from: usize, count: usize) -> String {
        (from..from + count)
            .map(|n| self.param(n))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// A write of `cols` (values bound as parameters 2..) to the row of key $1.
    pub(crate) fn write(&self, table: &str, cols: &[&str], kind: WriteKind) -> String {
        let mut s = String::new();
        if kind == WriteKind::Update {
            let _ = write!(s, "UPDATE {table} SET ");
            for (n, c) in cols.iter().enumerate() {
                let sep = if n > 0 { ", " } else { "" };
                let _ = write!(s, "{sep}{c} = {}", self.param(n + 2));
            }
            // with positional `?` (MySQL) the key is bound last: see key_last_in_update
            let _ = write!(s, " WHERE YCSB_KEY = {}", self.param(1));
            return s;
        }
        let verb = match (kind, self.upsert) {
            (WriteKind::Upsert, Upsert::UpsertInto) => "UPSERT INTO",
            _ => "INSERT INTO",
        };
        let _ = write!(
            s,
            "{verb} {table} (YCSB_KEY, {}) VALUES ({})",
            cols.join(", "),
            self.params(1, cols.len() + 1)
        );
        if kind == WriteKind::Upsert {
            let set = |f: &dyn Fn(&str) -> String| -> String {
                cols.iter().map(|c| f(c)).collect::<Vec<_>>().join(", ")
            };
            match self.upsert {
                Upsert::OnConflict => {
                    let _ = write!(
                        s,
                        " ON CONFLICT (YCSB_KEY) DO UPDATE SET {}",
                        set(&|c| format!("{c} = EXCLUDED.{c}"))
                    );
                }
                Upsert::OnDuplicateKey | Upsert::Replace => {
                    let _ = write!(
                        s,
                        " ON DUPLICATE KEY UPDATE {}",
                        set(&|c| format!("{c} = VALUES({c})"))
                    );
                }
                Upsert::UpsertInto => {}
            }
        }
        s
    }

    /// A multi-row INSERT (or upsert) of `rows` whole records of `fields`,
    /// parameters bound row by row, key first.
    pub(crate) fn insert_rows(
        &self,
        table: &str,
        fields: &[String],
        rows: usize,
        upsert: bool,
    ) -> String {
        let width = fields.len() + 1;
        let mut s = String::with_capacity(64 + rows * width * 4);
        let verb = match (upsert, self.upsert) {
            (true, Upsert::UpsertInto) => "UPSERT INTO",
            (true, Upsert::Replace) => "REPLACE INTO",
            _ => "INSERT INTO",
        };
        let _ = write!(
            s,
            "{verb} {table} (YCSB_KEY, {}) VALUES ",
            fields.join(", ")
        );
        for r in 0..rows {
            let sep = if r > 0 { ", " } else { "" };
            let _ = write!(s, "{sep}({})", self.params(1 + r * width, width));
        }
        if upsert {
            let set = |f: &dyn Fn(&String) -> String| -> String {
                fields.iter().map(f).collect::<Vec<_>>().join(", ")
            };
            match self.upsert {
                Upsert::OnConflict => {
                    let _ = write!(
                        s,
                        " ON CONFLICT (YCSB_KEY) DO UPDATE SET {}",
                        set(&|c| format!("{c} = EXCLUDED.{c}"))
                    );
                }
                Upsert::OnDuplicateKey => {
                    let _ = write!(
                        s,
                        " ON DUPLICATE KEY UPDATE {}",
                        set(&|c| format!("{c} = VALUES({c})"))
                    );
                }
                Upsert::Replace | Upsert::UpsertInto => {}
            }
        }
        s
    }

    /// Rows of `fields` + key per multi-row statement, under the protocol's
    /// limit of 65,535 bound parameters.
    pub(crate) fn max_rows_per_statement(fields: usize) -> usize {
        (65_535 / (fields + 1)).max(1)
    }

    /// Whether an UPDATE binds the key after the values (positional `?`).
    pub(crate) fn key_last_in_update(&self) -> bool {
        self.placeholder == Placeholder::Question
    }
}

impl Statements {
    pub(crate) fn new(table: &str, fields: &[String], d: Dialect) -> Self {
        let t = table;
        let cols = fields.join(", ");
        let k = d.param(1);
        let lim = d.param(2);
        let all: Vec<&str> = fields.iter().map(String::as_str).collect();
        let upsert_all = if d.upsert == Upsert::Replace {
            format!(
                "REPLACE INTO {t} (YCSB_KEY, {cols}) VALUES ({})",
                d.params(1, fields.len() + 1)
            )
        } else {
            d.write(t, &all, WriteKind::Upsert)
        };
        Statements {
            read_all: format!("SELECT {cols} FROM {t} WHERE YCSB_KEY = {k}"),
            read_one: fields
                .iter()
                .map(|c| format!("SELECT {c} FROM {t} WHERE YCSB_KEY = {k}"))
                .collect(),
            scan_all: format!(
                "SELECT YCSB_KEY, {cols} FROM {t} WHERE YCSB_KEY >= {k} ORDER BY YCSB_KEY LIMIT {lim}"
            ),
            scan_one: fields
                .iter()
                .map(|c| {
                    format!("SELECT YCSB_KEY, {c} FROM {t} WHERE YCSB_KEY >= {k} ORDER BY YCSB_KEY LIMIT {lim}")
                })
                .collect(),
            insert_all: d.write(t, &all, WriteKind::Insert),
            upsert_all,
            update_one: fields
                .iter()
                .map(|c| d.write(t, &[c], WriteKind::Update))
                .collect(),
            upsert_one: fields
                .iter()
                .map(|c| d.write(t, &[c], WriteKind::Upsert))
                .collect(),
            delete: format!("DELETE FROM {t} WHERE YCSB_KEY = {k}"),
            table: t.to_string(),
            fields: fields.to_vec(),
            dialect: d,
        }
    }

    pub(crate) fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// A write of exactly the fields `indices` (any subset, any order); not
    /// on the hot path.
    pub(crate) fn write_subset(
        &self,
        indices: impl Iterator<Item = usize>,
        kind: WriteKind,
    ) -> String {
        let cols: Vec<&str> = indices.map(|i| self.fields[i].as_str()).collect();
        self.dialect.write(&self.table, &cols, kind)
    }

    /// The statement kind of a write: an insert under the run's insert
    /// semantics, otherwise an update under its update semantics.
    pub(crate) fn kind(
        insert: bool,
        insert_mode: InsertMode,
        update_mode: UpdateMode,
    ) -> WriteKind {
        if insert {
            WriteKind::for_insert(insert_mode)
        } else {
            WriteKind::for_update(update_mode)
        }
    }

    /// The whole-record insert under `mode` (INSERT or the dialect's upsert).
    pub(crate) fn insert_for(&self, mode: InsertMode) -> &str {
        match mode {
            InsertMode::Insert => &self.insert_all,
            InsertMode::Upsert => &self.upsert_all,
        }
    }

    /// The one-field writes, by field, of an update under `mode`.
    pub(crate) fn update_one_for(&self, mode: UpdateMode) -> &[String] {
        match mode {
            UpdateMode::Update => &self.update_one,
            UpdateMode::Upsert => &self.upsert_one,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn portable_statements_take_each_dialects_placeholders_and_row_locks() {
        let sql = "SELECT a FROM t WHERE b = ? AND c = '?' AND d = ? FOR UPDATE";
        let d = |placeholder, row_locks| Dialect {
            placeholder,
            upsert: Upsert::OnConflict,
            row_locks,
        };
        assert_eq!(
            d(Placeholder::Dollar, true).statement(sql),
            "SELECT a FROM t WHERE b = $1 AND c = '?' AND d = $2 FOR UPDATE"
        );
        assert_eq!(
            d(Placeholder::NumberedQuestion, false).statement(sql),
            "SELECT a FROM t WHERE b = ?1 AND c = '?' AND d = ?2"
        );
        assert_eq!(d(Placeholder::Question, true).statement(sql), sql);
    }

    fn fields() -> Vec<String> {
        vec!["field0".into(), "field1".into()]
    }

    #[test]
    fn postgres_and_sqlite_differ_in_placeholders_only() {
        let pg = Statements::new(
            "usertable",
            &fields(),
            Dialect {
                placeholder: Placeholder::Dollar,
                upsert: Upsert::OnConflict,
                row_locks: true,
            },
        );
        assert_eq!(
            pg.read_all,
            "SELECT field0, field1 FROM usertable WHERE YCSB_KEY = $1"
        );
        assert_eq!(
            pg.upsert_all,
            "INSERT INTO usertable (YCSB_KEY, field0, field1) VALUES ($1, $2, $3) ON CONFLICT (YCSB_KEY) DO UPDATE SET field0 = EXCLUDED.field0, field1 = EXCLUDED.field1"
        );
        assert_eq!(
            pg.update_one[1],
            "UPDATE usertable SET field1 = $2 WHERE YCSB_KEY = $1"
        );
        assert_eq!(
            pg.scan_one[0],
            "SELECT YCSB_KEY, field0 FROM usertable WHERE YCSB_KEY >= $1 ORDER BY YCSB_KEY LIMIT $2"
        );
        let lite = Statements::new(
            "usertable",
            &fields(),
            Dialect {
                placeholder: Placeholder::NumberedQuestion,
                upsert: Upsert::OnConflict,
                row_locks: true,
            },
        );
        assert_eq!(
            lite.insert_all,
            "INSERT INTO usertable (YCSB_KEY, field0, field1) VALUES (?1, ?2, ?3)"
        );
        assert_eq!(
            lite.update_one[0],
            "UPDATE usertable SET field0 = ?2 WHERE YCSB_KEY = ?1"
        );
    }

    #[test]
    fn mysql_upserts_and_replace_keeps_subset_writes_safe() {
        let my = Statements::new(
            "usertable",
            &fields(),
            Dialect {
                placeholder: Placeholder::Question,
                upsert: Upsert::Replace,
                row_locks: true,
            },
        );
        assert_eq!(
            my.upsert_all,
            "REPLACE INTO usertable (YCSB_KEY, field0, field1) VALUES (?, ?, ?)"
        );
        assert_eq!(
            my.upsert_one[1],
            "INSERT INTO usertable (YCSB_KEY, field1) VALUES (?, ?) ON DUPLICATE KEY UPDATE field1 = VALUES(field1)"
        );
        assert_eq!(
            my.update_one[0],
            "UPDATE usertable SET field0 = ? WHERE YCSB_KEY = ?"
        );
        assert!(Dialect {
            placeholder: Placeholder::Question,
            upsert: Upsert::OnDuplicateKey,
            row_locks: true,
        }
        .key_last_in_update());
    }

    #[test]
    fn multi_row_inserts_number_parameters_row_by_row() {
        let pg = Dialect {
            placeholder: Placeholder::Dollar,
            upsert: Upsert::OnConflict,
            row_locks: true,
        };
        assert_eq!(
            pg.insert_rows("t", &fields(), 2, false),
            "INSERT INTO t (YCSB_KEY, field0, field1) VALUES ($1, $2, $3), ($4, $5, $6)"
        );
        assert!(pg
            .insert_rows("t", &fields(), 1, true)
            .ends_with("ON CONFLICT (YCSB_KEY) DO UPDATE SET field0 = EXCLUDED.field0, field1 = EXCLUDED.field1"));
        let my = Dialect {
            placeholder: Placeholder::Question,
            upsert: Upsert::Replace,
            row_locks: true,
        };
        assert_eq!(
            my.insert_rows("t", &fields(), 2, true),
            "REPLACE INTO t (YCSB_KEY, field0, field1) VALUES (?, ?, ?), (?, ?, ?)"
        );
        assert_eq!(Dialect::max_rows_per_statement(10), 5957);
    }

    #[test]
    fn cockroach_upsert_into_and_subset_writes() {
        let d = Dialect {
            placeholder: Placeholder::Dollar,
            upsert: Upsert::UpsertInto,
            row_locks: true,
        };
        let s = Statements::new("usertable", &fields(), d);
        assert_eq!(
            s.upsert_all,
            "UPSERT INTO usertable (YCSB_KEY, field0, field1) VALUES ($1, $2, $3)"
        );
        assert_eq!(
            s.write_subset([1, 0].into_iter(), WriteKind::Update),
            "UPDATE usertable SET field1 = $2, field0 = $3 WHERE YCSB_KEY = $1"
        );
        use {InsertMode as I, UpdateMode as U};
        assert_eq!(
            Statements::kind(true, I::Insert, U::Upsert),
            WriteKind::Insert
        );
        assert_eq!(
            Statements::kind(true, I::Upsert, U::Update),
            WriteKind::Upsert
        );
        assert_eq!(
            Statements::kind(false, I::Insert, U::Upsert),
            WriteKind::Upsert
        );
        assert_eq!(
            Statements::kind(false, I::Upsert, U::Update),
            WriteKind::Update
        );
    }
}
