//! `yardstick results [DIR]`: the catalogue of results as a table, filtered
//! by tag, database and workload; and the selectors (`tag:build=a`) that
//! compare and report accept in place of paths.
use crate::CliError;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use yardstick_orchestrate::catalogue::{scan, Filter, Row};
use yardstick_report::fmt::{latency, rate};

#[derive(clap::Args, Debug)]
pub(crate) struct ResultsArgs {
    /// The directory of results (suites' subdirectories included).
    #[arg(default_value = "results")]
    pub dir: PathBuf,
    /// Only results with this tag (repeatable: all must match).
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = crate::live::parse_tag_arg)]
    pub tags: Vec<(String, String)>,
    /// Only results of this database (the URL's scheme: postgres, redis, ...).
    #[arg(long = "db", value_name = "SCHEME")]
    pub database: Option<String>,
    /// Only results of this workload (workloada, tpcc 4w, ...).
    #[arg(long)]
    pub workload: Option<String>,
    /// table, or paths: one matching file per line (for scripts).
    #[arg(long, value_enum, default_value = "table")]
    pub format: ListFormat,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ListFormat {
    Table,
    Paths,
}

/// The rows `f` picks; `tell` names the files that are not results.
fn rows(dir: &Path, f: &Filter, tell: bool) -> Result<Vec<Row>, CliError> {
    let (rows, skipped) = scan(dir).map_err(|e| {
        CliError::bad_input(format!(
            "{e}; give the directory the results were written to (--results-dir)"
        ))
    })?;
    for (p, why) in skipped.iter().filter(|_| tell) {
        eprintln!("yardstick: skipped {}: {why}", p.display());
    }
    Ok(rows.into_iter().filter(|r| f.matches(r)).collect())
}

pub(crate) fn execute(a: &ResultsArgs) -> Result<i32, CliError> {
    let f = Filter {
        tags: a.tags.clone(),
        database: a.database.clone(),
        workload: a.workload.clone(),
    };
    let rows = rows(&a.dir, &f, true)?;
    match a.format {
        ListFormat::Paths => rows.iter().for_each(|r| println!("{}", r.path.display())),
        ListFormat::Table => print!("{}", table(&rows, &a.dir)),
    }
    Ok(0)
}

fn table(rows: &[Row], dir: &Path) -> String {
    let mut cells: Vec<[String; 9]> = vec![[
        "date",
        "command",
        "database",
        "workload",
        "tags",
        "throughput",
        "p99",
        "complete",
        "file",
    ]
    .map(String::from)];
    for r in rows {
        let tags: Vec<String> = r.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        cells.push([
            r.date.get(..19).unwrap_or(&r.date).replace('T', " "),
            r.command.clone(),
            r.database.clone(),
            r.workload.clone(),
            tags.join(","),
            format!("{} {}", rate(r.throughput), r.unit),
            r.p99_ns.map_or("-".into(), |p| latency(p as f64)),
            if r.complete { "yes" } else { "no" }.into(),
            r.path
                .strip_prefix(dir)
                .unwrap_or(&r.path)
                .display()
                .to_string(),
        ]);
    }
    let widths: Vec<usize> = (0..9)
        .map(|i| {
            cells
                .iter()
                .map(|c| c[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for c in &cells {
        let line: Vec<String> = c
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (s, w))| {
                // numbers right-aligned
                if i == 5 || i == 6 {
                    format!("{s:>w$}")
                } else {
                    format!("{s:<w$}")
                }
            })
            .collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
    }
    let _ = writeln!(out, "{} results", rows.len());
    out
}

/// The results under a directory, read once, when a selector first needs them.
pub(crate) struct Catalogue<'a> {
    dir: &'a Path,
    rows: Option<Vec<Row>>,
}

impl<'a> Catalogue<'a> {
    pub(crate) fn new(dir: &'a Path) -> Self {
        Catalogue { dir, rows: None }
    }

    fn all(&mut self) -> Result<&[Row], CliError> {
        if self.rows.is_none() {
            self.rows = Some(rows(self.dir, &Filter::default(), false)?);
        }
        Ok(self.rows.as_deref().unwrap_or_default())
    }

    /// A path stays a path; a selector becomes the results it picks (at
    /// least one, else an error naming the selector).
    pub(crate) fn resolve(&mut self, arg: &Path) -> Result<Vec<PathBuf>, CliError> {
        let text = arg.to_string_lossy();
        if !Filter::is_selector(&text) || arg.exists() {
            return Ok(vec![arg.to_path_buf()]);
        }
        let f = Filter::parse(&text).map_err(CliError::bad_input)?;
        let dir = self.dir;
        let picked: Vec<PathBuf> = self
            .all()?
            .iter()
            .filter(|r| f.matches(r))
            .map(|r| r.path.clone())
            .collect();
        if picked.is_empty() {
            return Err(CliError::bad_input(format!(
                "{text} selects no result in {}: list them with `yardstick results {}`",
                dir.display(),
                dir.display()
            )));
        }
        Ok(picked)
    }
}

/// `compare A B` where A and B may select several results: each result of A
/// is paired with the result of B of the same command, database and
/// workload.
pub(crate) fn pairs(a: &Path, b: &Path, dir: &Path) -> Result<Vec<(PathBuf, PathBuf)>, CliError> {
    let mut catalogue = Catalogue::new(dir);
    let (xs, ys) = (catalogue.resolve(a)?, catalogue.resolve(b)?);
    if xs.len() == 1 && ys.len() == 1 {
        return Ok(vec![(xs[0].clone(), ys[0].clone())]);
    }
    let all = catalogue.all()?;
    let key = |p: &PathBuf| {
        all.iter()
            .find(|r| &r.path == p)
            .map(|r| (r.command.clone(), r.database.clone(), r.workload.clone()))
    };
    let mut out = Vec::new();
    for x in &xs {
        let k = key(x);
        let same: Vec<&PathBuf> = ys.iter().filter(|y| key(y) == k).collect();
        let mine = xs.iter().filter(|x2| key(x2) == k).count();
        if same.len() > 1 || mine > 1 {
            let (c, d, w) = k.unwrap_or_default();
            return Err(CliError::bad_input(format!(
                "{} and {} each need one result per command, database and workload, but {c} {w} on {d} has {mine} and {}: add a tag or workload: to the selectors",
                a.display(),
                b.display(),
                same.len()
            )));
        }
        match same.first() {
            Some(y) => out.push((x.clone(), (*y).clone())),
            None => eprintln!(
                "yardstick: {} has no counterpart in {}",
                x.display(),
                b.display()
            ),
        }
    }
    for y in ys.iter().filter(|y| !out.iter().any(|(_, o)| o == *y)) {
        eprintln!(
            "yardstick: {} has no counterpart in {}",
            y.display(),
            a.display()
        );
    }
    if out.is_empty() {
        return Err(CliError::bad_input(format!(
            "{} and {} select no results of the same command, database and workload: nothing to compare",
            a.display(),
            b.display()
        )));
    }
    Ok(out)
}
