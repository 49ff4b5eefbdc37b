//! Flags that `load`, `run`, `replay` and `tpcc run` share about the run as
//! it goes and as it is filed: the metrics endpoint, and tags for the
//! results catalogue (and the metrics' info).
use crate::CliError;
use clap::Args;
use std::collections::BTreeMap;
use yardstick_core::metrics::server::Exporter;
use yardstick_core::metrics::RunInfo;

#[derive(Args, Debug, Clone, Default)]
pub(crate) struct LiveArgs {
    /// Label the result KEY=VALUE (repeatable), e.g. --tag build=a: shown
    /// and filtered by `yardstick results`, selected by `tag:KEY=VALUE` in
    /// compare and report.
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = parse_tag_arg)]
    pub tags: Vec<(String, String)>,
    /// Serve the live run at http://ADDR/metrics in Prometheus text or
    /// OpenMetrics (as the scraper asks), e.g. 127.0.0.1:9400 or 0.0.0.0:9400;
    /// port 0 picks a free one (printed). See docs/metrics.md.
    #[arg(long, value_name = "HOST:PORT")]
    pub metrics_listen: Option<String>,
    /// Observation of the host, the server's processes and the database's
    /// own statistics at every status interval, kept in the result
    /// (docs/observe.md): `on` (the default) or `off`; or a Prometheus
    /// exporter to scrape as well, e.g. http://db-host:9100/metrics
    /// (node_exporter), repeatable.
    #[arg(long, value_name = "on|off|URL", value_parser = parse_observe_arg)]
    pub observe: Vec<Observe>,
    /// Keep an exporter's families whose names match PATTERN (`*` for any
    /// run of characters, e.g. 'node_disk_*'), every label set a series of
    /// its own, instead of the default set; repeatable.
    #[arg(long, value_name = "PATTERN")]
    pub observe_metric: Vec<String>,
    /// The database server's main process on this machine, when it is not
    /// the one listening on the --db URL's port (a proxy in front, say):
    /// its processes' CPU, I/O and memory are observed.
    #[arg(long, value_name = "PID")]
    pub server_pid: Option<u32>,
    /// A local server's data directory, whose size is observed over the run.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<std::path::PathBuf>,
}

/// One `--observe` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Observe {
    On,
    Off,
    Exporter(yardstick_core::observe::scrape::Endpoint),
}

fn parse_observe_arg(s: &str) -> Result<Observe, String> {
    match s {
        "on" => Ok(Observe::On),
        "off" => Ok(Observe::Off),
        url if url.contains("://") => {
            yardstick_core::observe::scrape::Endpoint::parse(url).map(Observe::Exporter)
        }
        other => Err(format!(
            "'{other}' is not an observation setting: use on, off or an exporter's http://HOST:PORT/metrics"
        )),
    }
}

impl LiveArgs {
    /// Starts the metrics endpoint when asked for, naming the run `run_id`
    /// (the result file's name) in its info metric.
    pub(crate) fn metrics(
        &self,
        run_id: &std::path::Path,
        command: &str,
        workload: &str,
        url: &str,
    ) -> Result<Option<Exporter>, CliError> {
        let Some(addr) = &self.metrics_listen else {
            return Ok(None);
        };
        let info = RunInfo {
            run_id: run_id
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            command: command.into(),
            workload: workload.into(),
            database: url.split("://").next().unwrap_or("").to_ascii_lowercase(),
            tags: self.tag_map()?,
        };
        let e = Exporter::start(addr, info).map_err(CliError::bad_input)?;
        eprintln!("yardstick: metrics at http://{}/metrics", e.addr());
        Ok(Some(e))
    }

    /// The observation plan for a phase against `url`; `None` with
    /// `--observe off`.
    pub(crate) fn observation(
        &self,
        url: &str,
        interval: std::time::Duration,
    ) -> Option<yardstick_core::observe::Plan> {
        if self.observe.contains(&Observe::Off) {
            return None;
        }
        use yardstick_core::observe::scrape::Keep;
        let opts = yardstick_core::observe::Options {
            server_pid: self.server_pid,
            data_dir: self.data_dir.clone(),
            exporters: self
                .observe
                .iter()
                .filter_map(|o| match o {
                    Observe::Exporter(e) => Some(e.clone()),
                    _ => None,
                })
                .collect(),
            keep: if self.observe_metric.is_empty() {
                Keep::Default
            } else {
                Keep::Patterns(self.observe_metric.clone())
            },
        };
        let servers = yardstick_bindings::servers(url).ok().flatten();
        Some(yardstick_core::observe::Plan::new(
            &opts,
            servers.as_deref(),
            interval,
        ))
    }

    /// The tags as the result stores them; a key given twice is refused.
    pub(crate) fn tag_map(&self) -> Result<BTreeMap<String, String>, CliError> {
        let mut map = BTreeMap::new();
        for (k, v) in &self.tags {
            if let Some(old) = map.insert(k.clone(), v.clone()) {
                return Err(CliError::bad_input(format!(
                    "--tag {k} is given twice ({old} and {v}): give each key once"
                )));
            }
        }
        Ok(map)
    }
}

/// `--at`: faults during measurement (load, run and replay).
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct FaultArgs {
    /// Run a shell command at an offset into the measured phase (repeatable),
    /// e.g. --at 30s 'kill -9 1234': its start, end, exit status and output go
    /// into the result with the run's availability around it (error window,
    /// failed operations, recovery to 90% of throughput, p99 during and
    /// after). Makes --status-interval 1s unless set. See docs/faults.md.
    #[arg(long = "at", num_args = 2, value_names = ["OFFSET", "COMMAND"], action = clap::ArgAction::Append)]
    pub at: Vec<String>,
}

impl FaultArgs {
    pub(crate) fn faults(&self) -> Result<Vec<yardstick_core::run::faults::Fault>, CliError> {
        self.at
            .chunks(2)
            .map(|c| match c {
                [offset, command] => yardstick_core::run::faults::parse_at(offset, command)
                    .map_err(CliError::bad_input),
                _ => Err(CliError::bad_input(
                    "--at needs an offset and a command: --at 30s 'COMMAND'",
                )),
            })
            .collect()
    }
}

/// `KEY=VALUE`: a key of letters, digits, `_`, `-` and `.`; a value not empty.
pub(crate) fn parse_tag_arg(s: &str) -> Result<(String, String), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("'{s}' is not a tag: write KEY=VALUE, e.g. build=a"))?;
    let (k, v) = (k.trim(), v.trim());
    if k.is_empty()
        || !k
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return Err(format!(
            "'{k}' is not a tag key: use letters, digits, '_', '-' and '.', e.g. build=a"
        ));
    }
    if v.is_empty() {
        return Err(format!("tag {k} has no value: write {k}=VALUE"));
    }
    // the report's scaling across nodes reads these two as counts
    let sizes = [
        yardstick_report::nodes::NODES_TAG,
        yardstick_report::nodes::CORES_TAG,
    ];
    if sizes.contains(&k) && !v.parse::<u32>().is_ok_and(|n| n > 0) {
        return Err(format!(
            "tag {k}={v}: {k} is a count, a whole number above 0, e.g. {k}=3"
        ));
    }
    Ok((k.to_string(), v.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_parse_and_refuse_what_cannot_be_selected() {
        assert_eq!(
            parse_tag_arg("build=v1.2=rc"),
            Ok(("build".into(), "v1.2=rc".into()))
        );
        for (bad, want) in [
            ("build", "is not a tag: write KEY=VALUE"),
            ("=a", "'' is not a tag key"),
            ("a b=c", "'a b' is not a tag key"),
            ("build=", "tag build has no value"),
            ("nodes=three", "tag nodes=three: nodes is a count"),
            ("cores=0", "tag cores=0: cores is a count"),
        ] {
            let e = parse_tag_arg(bad).unwrap_err();
            assert!(e.contains(want), "{bad}: {e}");
        }
        let twice = LiveArgs {
            tags: vec![("a".into(), "1".into()), ("a".into(), "2".into())],
            ..Default::default()
        };
        assert!(twice
            .tag_map()
            .unwrap_err()
            .message
            .contains("--tag a is given twice (1 and 2)"));
    }
}
