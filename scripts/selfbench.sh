#!/usr/bin/env bash
# Measures the harness itself: YCSB workloads A and C against null:// at 1, 2
# and 16 threads, side by side in one invocation. Prints operations per second
# and process CPU per operation (the client's whole cost: key choice, value
# generation, timing, recording, status line).
# Usage: scripts/selfbench.sh [operationcount]   (default 20000000)
set -euo pipefail
cd "$(dirname "$0")/.."
ops=${1:-20000000}
cargo build --release --quiet
bin=target/release/yardstick
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-28s %8s %14s %14s\n' "workload" "threads" "ops/s" "CPU ns/op"
for spec in "C:workloadc:" "A:workloada:" "A, 1 KB updates:workloada:writeallfields=true"; do
    IFS=: read -r label wl extra <<<"$spec"
    for t in 1 2 16; do
        args=(run --db null:// -P "$wl" -p recordcount=1000000 -p "operationcount=$ops" --threads "$t" -q --format json --out "$out/r.json")
        [ -n "$extra" ] && args+=(-p "$extra")
        # runs: yardstick
        "$bin" "${args[@]}" 2>/dev/null |
            python3 -c 'import json,sys; r=json.load(sys.stdin); print("%.0f %.0f" % (r["totals"]["ops_per_sec"], r["client"]["cpu_ns_per_op"]))' |
            { read -r rate ns; printf '%-28s %8s %14s %14s\n' "$label" "$t" "$rate" "$ns"; }
    done
done

# --trace's cost: workload C at 1 thread with and without a trace, side by
# side (alternating, median of 3); the trace goes to the scratch directory.
echo
printf '%-28s %14s %14s %14s\n' "workload C, 1 thread" "ops/s" "CPU ns/op" "trace B/op"
for mode in plain traced plain traced plain traced; do
    args=(run --db null:// -P workloadc -p recordcount=1000000 -p "operationcount=$ops" --threads 1 -q --format json --out "$out/t.json")
    [ "$mode" = traced ] && rm -f "$out/t.trace" && args+=(--trace "$out/t.trace")
    # runs: yardstick
    "$bin" "${args[@]}" 2>/dev/null |
        python3 -c 'import json,sys; r=json.load(sys.stdin); t=r.get("trace"); print("%.0f %.1f %s" % (r["totals"]["ops_per_sec"], r["client"]["cpu_ns_per_op"], "%.1f" % (t["bytes"]/t["records"]) if t else "-"))' >>"$out/$mode"
done
for mode in plain traced; do
    sort -n -k2 "$out/$mode" | sed -n 2p | { read -r rate ns b; printf '%-28s %14s %14s %14s\n' "$mode" "$rate" "$ns" "$b"; }
done
python3 - "$out/plain" "$out/traced" <<'PY'
import sys
med = lambda f: sorted(float(l.split()[1]) for l in open(f))[1]
print("added client CPU with --trace: %+.1f%%" % (100 * (med(sys.argv[2]) / med(sys.argv[1]) - 1)))
PY
