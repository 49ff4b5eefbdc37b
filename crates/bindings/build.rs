//! Build script: records the versions of the Rust engine crates (from
//! Cargo.lock) for the results, and for the engines that link Debian's C
//! libraries checks that the library is installed (naming the apt package when
//! it is not), compiles the WiredTiger shim and links the libraries.
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=csrc/wt_shim.c");
    println!("cargo:rerun-if-env-changed=ROCKSDB_LIB_DIR");
    record_crate_versions();
    let feature =
        |f: &str| std::env::var_os(format!("CARGO_FEATURE_{}", f.to_uppercase())).is_some();
    if feature("rocksdb") {
        let dirs = lib_dirs(std::env::var_os("ROCKSDB_LIB_DIR").map(PathBuf::from));
        require_lib(
            "rocksdb",
            "librocksdb.so",
            &dirs,
            "librocksdb-dev (and libclang-dev for bindgen)",
        );
    }
    if feature("leveldb") {
        require_header("leveldb", "leveldb/c.h", "libleveldb-dev");
        require_lib(
            "leveldb",
            "libleveldb.so",
            &lib_dirs(None),
            "libleveldb-dev",
        );
        println!("cargo:rustc-link-lib=dylib=leveldb");
    }
    if feature("wiredtiger") {
        require_header("wiredtiger", "wiredtiger.h", "libwiredtiger-dev");
        require_lib(
            "wiredtiger",
            "libwiredtiger.so",
            &lib_dirs(None),
            "libwiredtiger-dev",
        );
        cc::Build::new()
            .file("csrc/wt_shim.c")
            .warnings(true)
            .compile("yardstick_wt_shim");
        println!("cargo:rustc-link-lib=dylib=wiredtiger");
    }
}

/// Exposes `YARDSTICK_<CRATE>_VERSION` for the engine crates in Cargo.lock.
fn record_crate_versions() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let lock = manifest.join("../../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let text = std::fs::read_to_string(&lock).unwrap_or_default();
    for name in ["redb", "fjall", "heed", "rocksdb", "librocksdb-sys"] {
        let version = lock_version(&text, name).unwrap_or_else(|| "unknown".into());
        let var = name.replace('-', "_").to_uppercase();
        println!("cargo:rustc-env=YARDSTICK_{var}_VERSION={version}");
    }
}

/// The newest version of package `name` in a Cargo.lock text.
fn lock_version(lock: &str, name: &str) -> Option<String> {
    let mut found: Option<String> = None;
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == format!("name = \"{name}\"") {
            if let Some(v) = lines
                .next()
                .and_then(|l| l.trim().strip_prefix("version = \""))
            {
                let v = v.trim_end_matches('"').to_string();
                if found.as_ref().is_none_or(|f| newer(&v, f)) {
                    found = Some(v);
                }
            }
        }
    }
    found
}

fn newer(a: &str, b: &str) -> bool {
    let parse = |s: &str| -> Vec<u64> {
        s.split(['.', '+', '-'])
            .map(|p| p.parse().unwrap_or(0))
            .collect()
    };
    parse(a) > parse(b)
}

fn lib_dirs(extra: Option<PathBuf>) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = extra.into_iter().collect();
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    for d in [
        format!("/usr/lib/{arch}-linux-gnu"),
        "/usr/lib".into(),
        "/usr/local/lib".into(),
        "/usr/lib64".into(),
    ] {
        dirs.push(d.into());
    }
    dirs
}

fn require_lib(feature: &str, file: &str, dirs: &[PathBuf], package: &str) {
    if !dirs.iter().any(|d| d.join(file).exists()) {
        fail(
            feature,
            &format!("{file} was not found in {}", show(dirs)),
            package,
        );
    }
}

fn require_header(feature: &str, header: &str, package: &str) {
    let dirs = [Path::new("/usr/include"), Path::new("/usr/local/include")];
    if !dirs.iter().any(|d| d.join(header).exists()) {
        fail(
            feature,
            &format!("the header {header} was not found"),
            package,
        );
    }
}

fn show(dirs: &[PathBuf]) -> String {
    dirs.iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn fail(feature: &str, what: &str, package: &str) -> ! {
    eprintln!(
        "error: the `{feature}` feature links the system's {feature} library, but {what}: install it with `apt-get install {package}` (Debian/Ubuntu), or build without --features {feature}"
    );
    std::process::exit(1);
}
