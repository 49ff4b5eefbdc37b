#!/usr/bin/env bash
# The whole test suite, as CI runs it: first the check that every program the
# scripts and tests run is declared with its package, then the install of
# whatever this machine lacks (scripts/commands.txt, Debian packages without
# recommended ones), the test servers on loopback, formatting, lints and every
# unit, conformance and end-to-end test, with every cargo feature.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

command -v cargo >/dev/null 2>&1 || die "cargo is not installed; install Rust stable from https://rustup.rs"
echo "== every program the scripts and tests run is declared (scripts/check-commands)"
need python3 shfmt
scripts/check-commands

echo "== installing what this machine lacks (scripts/commands.txt)"
need_all
rustup component add rustfmt clippy >/dev/null 2>&1 || true

echo "== test servers"
# the tests' scratch databases (embedded engines kept open until a test process
# ends) go too
trap 'scripts/services stop; rm -rf "${TMPDIR:-/tmp}/yardstick-tests"' EXIT
scripts/services start

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy (all targets, all features, warnings are errors)"
cargo clippy --workspace --all-targets --all-features -- -D warnings
echo "== cargo test (release: the statistical and end-to-end tests run real workloads)"
cargo test --workspace --all-features --release
