#!/usr/bin/env bash
# The whole test suite, as CI runs it: formatting, lints, then every unit,
# conformance and end-to-end test, with every cargo feature. The servers the
# tests need are installed and started on loopback here, and stopped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1; then
    echo "scripts/test.sh: cargo is not installed; install Rust from https://rustup.rs" >&2
    exit 2
fi
rustup component add rustfmt clippy >/dev/null 2>&1 || true

echo "== test servers"
trap 'scripts/services stop' EXIT
scripts/services start

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy (all targets, all features, warnings are errors)"
cargo clippy --workspace --all-targets --all-features -- -D warnings
echo "== cargo test (release: the statistical and end-to-end tests run real workloads)"
cargo test --workspace --all-features --release
