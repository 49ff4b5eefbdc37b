//! `--memory-limit SIZE`: the benchmark process, engine included, runs as a
//! child in a memory cgroup of its own, as the storage-engine reports capped
//! their benchmark processes. cgroup v2 sets `memory.max` (and
//! `memory.swap.max=0`); cgroup v1 sets `memory.limit_in_bytes` (and
//! `memory.memsw.limit_in_bytes` where swap is accounted). The page cache is
//! charged to the cgroup too, so file reads are capped along with the heap;
//! pages cached before the phase are dropped first when the kernel allows it,
//! and the result records whether they were.
//!
//! When the cgroup's OOM killer ends the child, the parent writes the result
//! itself, marked incomplete and `memory_limit.oom_killed`, so the cell of an
//! experiment says what happened instead of vanishing.
use std::ffi::CString;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use yardstick_core::result::MemoryLimit;

/// Set in the child: the cgroup directory it runs in.
pub(crate) const CHILD_ENV: &str = "YARDSTICK_MEMORY_CGROUP";
const LIMIT_ENV: &str = "YARDSTICK_MEMORY_LIMIT";
const MECHANISM_ENV: &str = "YARDSTICK_MEMORY_MECHANISM";
const PAGE_CACHE_ENV: &str = "YARDSTICK_PAGE_CACHE";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Version {
    V1,
    V2,
}

/// A memory cgroup created for one child; removed when dropped.
#[derive(Debug)]
pub(crate) struct Cgroup {
    dir: PathBuf,
    version: Version,
    limit: u64,
    mechanism: String,
}

/// Where the memory controller of this process's cgroup lives, from
/// /proc/self/mountinfo and /proc/self/cgroup.
pub(crate) fn locate(mountinfo: &str, cgroups: &str) -> Option<(PathBuf, Version)> {
    let own = |pred: &dyn Fn(&str) -> bool| -> Option<String> {
        cgroups.lines().find_map(|l| {
            let mut parts = l.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            pred(controllers).then(|| path.to_string())
        })
    };
    // cgroup v1: a `cgroup` mount whose options include `memory`
    for line in mountinfo.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let mut r = right.split_whitespace();
        let (fstype, _source, options) = (r.next()?, r.next(), r.next().unwrap_or(""));
        let fields: Vec<&str> = left.split_whitespace().collect();
        let (root, mount) = (fields.get(3)?, fields.get(4)?);
        if fstype == "cgroup" && options.split(',').any(|o| o == "memory") {
            let path = own(&|c| c.split(',').any(|x| x == "memory"))?;
            let rel = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .trim_start_matches('/');
            return Some((Path::new(mount).join(rel), Version::V1));
        }
    }
    for line in mountinfo.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let fields: Vec<&str> = left.split_whitespace().collect();
        if right.split_whitespace().next() == Some("cgroup2") {
            let (root, mount) = (fields.get(3)?, fields.get(4)?);
            let path = own(&|c| c.is_empty())?;
            let rel = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .trim_start_matches('/');
            return Some((Path::new(mount).join(rel), Version::V2));
        }
    }
    None
}

fn write(path: &Path, value: &str) -> std::io::Result<()> {
    std::fs::write(path, value)
}

fn read_u64(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Why a memory cap cannot be set up on this machine.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CgroupError {
    #[error("{HINT}, and this machine mounts no cgroup memory controller")]
    NoController,
    #[error("{HINT}: cannot enable the memory controller in {}: {source}", dir.display())]
    Enable {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("{HINT}: cannot create {}: {source}", dir.display())]
    Create {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot set {file} of {} to {limit}: {source}; choose a larger --memory-limit", dir.display())]
    Set {
        file: &'static str,
        dir: PathBuf,
        limit: u64,
        source: std::io::Error,
    },
    #[error("the kernel did not take the memory limit of {} bytes (its cgroup file {file} in {} reads {applied}): give a smaller --memory-limit", limit, dir.display())]
    NotTaken {
        file: &'static str,
        dir: PathBuf,
        limit: u64,
        applied: u64,
    },
}

const HINT: &str =
    "--memory-limit and --server-memory-limit need a memory cgroup they may create (root, or a delegated cgroup v2 subtree)";

impl Cgroup {
    /// Creates a memory cgroup capped at `limit` bytes, or says in one line
    /// why this machine does not allow it.
    pub(crate) fn create(limit: u64) -> Result<Cgroup, CgroupError> {
        Cgroup::create_named(limit, &format!("yardstick-{}", std::process::id()))
    }

    /// [`Cgroup::create`] with the cgroup's directory name chosen.
    pub(crate) fn create_named(limit: u64, name: &str) -> Result<Cgroup, CgroupError> {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let cgroups = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let (base, version) = locate(&mountinfo, &cgroups).ok_or(CgroupError::NoController)?;
        if version == Version::V2 {
            // the controller must be enabled for children of our cgroup
            let controllers =
                std::fs::read_to_string(base.join("cgroup.subtree_control")).unwrap_or_default();
            if !controllers.split_whitespace().any(|c| c == "memory") {
                write(&base.join("cgroup.subtree_control"), "+memory").map_err(|source| {
                    CgroupError::Enable {
                        dir: base.clone(),
                        source,
                    }
                })?;
            }
        }
        let dir = base.join(name);
        std::fs::create_dir(&dir).map_err(|source| CgroupError::Create {
            dir: dir.clone(),
            source,
        })?;
        let cg = Cgroup {
            dir,
            version,
            limit,
            mechanism: match version {
                Version::V1 => "cgroup v1 memory.limit_in_bytes".into(),
                Version::V2 => "cgroup v2 memory.max".into(),
            },
        };
        let (file, swap) = match version {
            Version::V1 => ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes"),
            Version::V2 => ("memory.max", "memory.swap.max"),
        };
        write(&cg.dir.join(file), &limit.to_string()).map_err(|source| CgroupError::Set {
            file,
            dir: cg.dir.clone(),
            limit,
            source,
        })?;
        if let Some(applied) = read_u64(&cg.dir.join(file)) {
            if version == Version::V1 && applied > limit + 4096 {
                return Err(CgroupError::NotTaken {
                    file,
                    dir: cg.dir.clone(),
                    limit,
                    applied,
                });
            }
        }
        // no swapping around the limit, where swap is accounted
        let swap_value = if version == Version::V1 {
            limit.to_string()
        } else {
            "0".into()
        };
        let mut cg = cg;
        if cg.dir.join(swap).exists() && write(&cg.dir.join(swap), &swap_value).is_ok() {
            cg.mechanism.push_str(", swap capped too");
        }
        Ok(cg)
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// cgroup v1: processes moved in bring the memory they hold with them
    /// (anonymous and page cache), so it counts against the limit. Whether
    /// the kernel took it.
    pub(crate) fn move_charges(&self) -> bool {
        self.version == Version::V1
            && write(&self.dir.join("memory.move_charge_at_immigrate"), "3").is_ok()
    }

    /// Lowers the cgroup's limit to `bytes` (swap too, where it is capped).
    pub(crate) fn lower_limit(&mut self, bytes: u64) -> std::io::Result<()> {
        let (file, swap) = match self.version {
            Version::V1 => ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes"),
            Version::V2 => ("memory.max", "memory.swap.max"),
        };
        // v1 keeps memory <= memory+swap at every step: memory first
        write(&self.dir.join(file), &bytes.to_string())?;
        if self.version == Version::V1 && self.dir.join(swap).exists() {
            let _ = write(&self.dir.join(swap), &bytes.to_string());
        }
        self.limit = bytes;
        Ok(())
    }

    /// Moves process `pid` (all its threads) into the cgroup.
    pub(crate) fn adopt(&self, pid: u32) -> std::io::Result<()> {
        adopt(&self.dir, pid)
    }

    /// The processes in the cgroup now.
    pub(crate) fn procs(&self) -> Vec<u32> {
        std::fs::read_to_string(self.dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// Whether the cgroup's OOM killer killed a process.
    pub(crate) fn oom_killed(&self) -> bool {
        let (file, key) = match self.version {
            Version::V1 => ("memory.oom_control", "oom_kill"),
            Version::V2 => ("memory.events", "oom_kill"),
        };
        std::fs::read_to_string(self.dir.join(file))
            .ok()
            .and_then(|t| {
                t.lines().find_map(|l| {
                    let (k, v) = l.split_once(' ')?;
                    (k == key).then(|| v.trim().parse::<u64>().ok()).flatten()
                })
            })
            .is_some_and(|n| n > 0)
    }

    /// Memory (heap and page cache) the cgroup held at most.
    pub(crate) fn peak(&self) -> Option<u64> {
        peak_of(&self.dir)
    }

    /// The record for a result of a process that ran in this cgroup.
    pub(crate) fn record(&self, page_cache: &str, oom_killed: bool) -> MemoryLimit {
        MemoryLimit {
            bytes: self.limit,
            mechanism: self.mechanism.clone(),
            cgroup: self.dir.display().to_string(),
            page_cache: page_cache.to_string(),
            peak_bytes: self.peak(),
            oom_killed,
        }
    }

    /// Makes `cmd` run inside the cgroup (it moves itself in before exec)
    /// with the variables that tell the child what it runs under.
    pub(crate) fn prepare(
        &self,
        cmd: &mut std::process::Command,
        page_cache: &str,
    ) -> std::io::Result<()> {
        let procs = CString::new(self.dir.join("cgroup.procs").as_os_str().as_encoded_bytes())
            .map_err(|_| std::io::Error::other("the cgroup path contains a NUL byte"))?;
        cmd.env(CHILD_ENV, &self.dir)
            .env(LIMIT_ENV, self.limit.to_string())
            .env(MECHANISM_ENV, &self.mechanism)
            .env(PAGE_CACHE_ENV, page_cache);
        // SAFETY: between fork and exec only async-signal-safe calls are made
        // (open, write, close), on buffers prepared before the fork.
        unsafe {
            cmd.pre_exec(move || {
                let fd = libc::open(procs.as_ptr(), libc::O_WRONLY);
                if fd < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let ok = libc::write(fd, b"0\n".as_ptr().cast(), 2) == 2;
                let err = std::io::Error::last_os_error();
                libc::close(fd);
                if ok {
                    Ok(())
                } else {
                    Err(err)
                }
            });
        }
        Ok(())
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // a cgroup can be removed once its processes are gone
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

/// Moves process `pid` into the cgroup at `dir`.
pub(crate) fn adopt(dir: &Path, pid: u32) -> std::io::Result<()> {
    write(&dir.join("cgroup.procs"), &pid.to_string())
}

fn peak_of(dir: &Path) -> Option<u64> {
    read_u64(&dir.join("memory.max_usage_in_bytes")).or_else(|| read_u64(&dir.join("memory.peak")))
}

/// In the child: what it runs under, for its result.
pub(crate) fn child_record() -> Option<MemoryLimit> {
    let dir = PathBuf::from(std::env::var_os(CHILD_ENV)?);
    Some(MemoryLimit {
        bytes: std::env::var(LIMIT_ENV).ok()?.parse().ok()?,
        mechanism: std::env::var(MECHANISM_ENV).unwrap_or_default(),
        cgroup: dir.display().to_string(),
        page_cache: std::env::var(PAGE_CACHE_ENV).unwrap_or_default(),
        peak_bytes: peak_of(&dir),
        oom_killed: false,
    })
}

/// Drops clean cached pages so the capped phase starts cold: returns what the
/// result should say about the page cache.
pub(crate) fn drop_page_cache() -> (String, Option<String>) {
    // SAFETY: sync(2) has no preconditions.
    unsafe { libc::sync() };
    match std::fs::write("/proc/sys/vm/drop_caches", "1") {
        Ok(()) => ("dropped before the phase (/proc/sys/vm/drop_caches)".into(), None),
        Err(e) => (
            format!("not dropped ({e}): pages cached before the phase may serve reads beyond the limit"),
            Some(format!(
                "the page cache could not be dropped ({e}); make the data set larger than --memory-limit, or run as root, so cached pages do not serve reads beyond the limit"
            )),
        ),
    }
}

/// What ended a child that did not exit by itself.
pub(crate) fn describe(status: &std::process::ExitStatus) -> Option<i32> {
    status.signal()
}

/// How a capped child ended.
#[derive(Debug)]
pub(crate) enum Capped {
    /// It exited with this code, having written its own result.
    Exited(i32),
    /// A signal ended it (the OOM killer, usually): the parent writes the result.
    Killed(Killed),
}

/// What the parent's result of a killed child says.
#[derive(Debug)]
pub(crate) struct Killed {
    /// The result's first warning.
    pub why: String,
    pub record: MemoryLimit,
    pub started: std::time::SystemTime,
    pub elapsed: std::time::Duration,
}

/// `--memory-limit`: runs this same command again (`command_line` without
/// the program, plus `extra` arguments) as a child in a memory cgroup of
/// `limit` bytes, the page cache dropped first, and waits for it; a signal
/// this process gets is passed on to the child, and the cgroup is removed
/// once the child is gone.
pub(crate) fn run_capped(
    control: &yardstick_core::run::Control,
    limit: u64,
    command_line: &[String],
    extra: &[String],
) -> Result<Capped, crate::CliError> {
    use crate::CliError;
    let cg = Cgroup::create(limit).map_err(CliError::bad_input)?;
    let (page_cache, warning) = drop_page_cache();
    if let Some(w) = &warning {
        eprintln!("yardstick: warning: {w}");
    }
    let exe = std::env::current_exe()
        .map_err(|e| CliError::failed(format!("cannot find the yardstick executable: {e}")))?;
    // runs: yardstick, this executable
    let mut cmd = std::process::Command::new(exe);
    cmd.args(command_line.iter().skip(1)).args(extra);
    let started = std::time::SystemTime::now();
    let t0 = std::time::Instant::now();
    let status = cg
        .prepare(&mut cmd, &page_cache)
        .and_then(|()| control.run_child(&mut cmd))
        .map_err(|e| {
            CliError::bad_input(format!(
                "cannot run the benchmark process in cgroup {}: {e}",
                cg.dir().display()
            ))
        })?;
    if let Some(code) = status.code() {
        return Ok(Capped::Exited(code));
    }
    let oom = cg.oom_killed();
    let signal = describe(&status).unwrap_or(0);
    let why = if oom {
        format!(
            "killed by the memory limit: the cgroup's OOM killer ended the benchmark process (signal {signal}) at --memory-limit {limit} bytes; no figures were kept"
        )
    } else {
        format!("the benchmark process was killed by signal {signal}; no figures were kept")
    };
    Ok(Capped::Killed(Killed {
        why,
        record: cg.record(&page_cache, oom),
        started,
        elapsed: t0.elapsed(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_v1_memory_controller_is_found_under_the_process_cgroup() {
        let mountinfo = "\
35 25 0:30 / /sys/fs/cgroup/cpu rw,relatime shared:9 - cgroup cgroup rw,cpu
36 25 0:31 / /sys/fs/cgroup/memory rw,relatime shared:10 - cgroup cgroup rw,memory
37 25 0:32 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw";
        let cgroups = "5:cpu:/\n4:memory:/jobs/abc\n0::/";
        assert_eq!(
            locate(mountinfo, cgroups),
            Some((PathBuf::from("/sys/fs/cgroup/memory/jobs/abc"), Version::V1))
        );
    }

    #[test]
    fn a_unified_hierarchy_is_v2_and_a_namespaced_root_is_stripped() {
        let mountinfo = "30 25 0:26 /user.slice /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw";
        let cgroups = "0::/user.slice/session-1.scope";
        assert_eq!(
            locate(mountinfo, cgroups),
            Some((PathBuf::from("/sys/fs/cgroup/session-1.scope"), Version::V2))
        );
        assert_eq!(locate("", "0::/"), None);
    }
}
