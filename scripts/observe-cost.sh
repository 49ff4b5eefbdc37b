#!/usr/bin/env bash
# What observation costs the measurement: the same run with --observe on and
# off, alternating (off first in every other round), on null:// (the
# harness alone, where any cost shows most), the test PostgreSQL and the test
# Redis (scripts/services starts them). Prints, per target and setting, the
# median of the rounds' throughput and client CPU per operation, the ratios
# on / off, and each source's sampling CPU from the "on" results.
# Usage: scripts/observe-cost.sh [ROUNDS]   (default 6)
#        OBSERVE_COST_SECONDS=N (default 5): each run's length
#        OBSERVE_COST_SERVERS=0: null:// only
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh
usage="usage: scripts/observe-cost.sh [ROUNDS]"
positive() {
    case $2 in
    '' | *[!0-9]*) false ;;
    *) [ "$2" -gt 0 ] ;;
    esac || die "$1=$2 is not a positive whole number; try the default, $3"
}
[ $# -le 1 ] || die "too many arguments; $usage"
case ${1:-} in -*) die "unknown option $1; $usage" ;; esac
rounds=${1:-6}
seconds=${OBSERVE_COST_SECONDS:-5}
positive ROUNDS "$rounds" 6
positive OBSERVE_COST_SECONDS "$seconds" 5
# the test suite's build (scripts/test.sh), so a tested tree is not rebuilt
cargo build --release --all-features --quiet
bin=target/release/yardstick
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
targets=("null|null://|workloadc")
if [ "${OBSERVE_COST_SERVERS:-1}" != 0 ]; then
    pg=${YARDSTICK_POSTGRES_URL:-postgres://bench:benchpw@127.0.0.1:55432/ycsb}
    redis=${YARDSTICK_REDIS_URL:-redis://:benchpw@127.0.0.1:56379}
    for u in "$pg" "$redis"; do
        # runs: yardstick
        "$bin" load --db "$u" -P workloadc -p recordcount=10000 -p table=observecost --clear -q --out "$out/load.json" >/dev/null ||
            die "cannot load $u: start the test servers with scripts/services start"
    done
    targets+=("postgresql|$pg|workloadc" "redis|$redis|workloadc")
fi
for t in "${targets[@]}"; do
    IFS='|' read -r label url wl <<<"$t"
    for r in $(seq 1 "$rounds"); do
        order=(on off)
        [ $((r % 2)) -eq 0 ] && order=(off on)
        for o in "${order[@]}"; do
            # runs: yardstick
            "$bin" run --db "$url" -P "$wl" -p recordcount=10000 -p table=observecost \
                -p operationcount=1000000000 --duration "${seconds}s" --threads 2 --concurrency 4 \
                --status-interval 1s --observe "$o" -q --format json --out "$out/$label-$o-$r.json" >/dev/null 2>&1
        done
    done
done
python3 - "$out" "${targets[@]}" <<'EOF'
import glob, json, statistics, sys
out, targets = sys.argv[1], sys.argv[2:]
print(f"{'target':<12} {'observe':>7} {'ops/s':>12} {'CPU ns/op':>10} {'ratio ops/s':>12} {'ratio CPU':>10}")
for t in targets:
    label = t.split("|")[0]
    med = {}
    for o in ("off", "on"):
        rs = [json.load(open(f)) for f in sorted(glob.glob(f"{out}/{label}-{o}-*.json"))]
        med[o] = (statistics.median(r["totals"]["ops_per_sec"] for r in rs),
                  statistics.median(r["client"]["cpu_ns_per_op"] for r in rs), rs)
    for o in ("off", "on"):
        ops, cpu, _ = med[o]
        ratio = ("", "")
        if o == "on":
            ratio = (f"{ops / med['off'][0]:.3f}x", f"{cpu / med['off'][1]:.3f}x")
        print(f"{label:<12} {o:>7} {ops:>12,.0f} {cpu:>10,.0f} {ratio[0]:>12} {ratio[1]:>10}")
    cost = {}
    for r in med["on"][2]:
        secs = r["elapsed_s"]
        for s in r["observation"]["sources"]:
            cost.setdefault(s["name"], []).append((s["cpu_s"] / secs, s["mean_sample_ms"]))
    for name, xs in cost.items():
        share = statistics.median(x[0] for x in xs)
        ms = statistics.median(x[1] for x in xs)
        print(f"    source {name}: {share * 100:.3f}% of a core, {ms:.2f} ms a sample")
EOF
