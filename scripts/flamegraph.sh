#!/usr/bin/env bash
# Where a yardstick run's own CPU goes, as a flame graph. perf samples the
# run on the cpu-clock event (a timer every host has; a VM may offer no
# hardware counters) and unwinds each sample's stack from DWARF (a release
# build keeps no frame pointers), inlined frames included: a worker's hot
# loop is one function once inlined, and by symbol alone its profile is two
# bars. inferno (built once with cargo install into $SELFBENCH_TOOLS, where
# selfbench.sh builds latte) folds the stacks and draws the SVG; the folded
# stacks are kept next to it, for inferno-diff-folded between two builds.
# Prints the frames with the most samples: on top of a stack (self, any
# code) and anywhere on it (total, yardstick's own functions).
# Usage: scripts/flamegraph.sh [-o OUT.svg] [-- YARDSTICK-ARGS...]
#   default arguments: run --db null:// -P workloadc -p recordcount=1000000
#       -p operationcount=20000000 --threads 1
#   default OUT: results/flamegraph-DATE-TIME.svg (and .folded)
#   FLAMEGRAPH_HZ=N (default 999): samples a second
#   FLAMEGRAPH_BIN=PATH: profile this yardstick binary instead of building
#       target/release/yardstick
#   SELFBENCH_TOOLS=DIR (default /var/tmp/yardstick-selfbench): where inferno is built
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh
usage="usage: scripts/flamegraph.sh [-o OUT.svg] [-- YARDSTICK-ARGS...]"
svg=
while [ $# -gt 0 ]; do
    case $1 in
    -o)
        [ $# -ge 2 ] || die "-o needs a file name; $usage"
        svg=$2
        shift 2
        ;;
    --)
        shift
        break
        ;;
    *) die "unknown option $1; $usage" ;;
    esac
done
args=("$@")
[ ${#args[@]} -gt 0 ] ||
    args=(run --db null:// -P workloadc -p recordcount=1000000 -p operationcount=20000000 --threads 1)
hz=${FLAMEGRAPH_HZ:-999}
case $hz in '' | *[!0-9]*) die "FLAMEGRAPH_HZ=$hz is not a whole number of samples a second; try 999" ;; esac
[ -n "$svg" ] || svg=results/flamegraph-$(date +%Y%m%d-%H%M%S).svg
folded=${svg%.svg}.folded

# perf resolves inlined frames with addr2line
need perf addr2line python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# asked before any build, so that a host where perf may not sample is
# named as such, not mistaken for a failed run
if ! perf record -q -N -e cpu-clock -o "$work/probe.data" -- true >"$work/probe.log" 2>&1; then
    paranoid=unknown
    [ -r /proc/sys/kernel/perf_event_paranoid ] && read -r paranoid </proc/sys/kernel/perf_event_paranoid
    die "perf cannot sample on this host (kernel.perf_event_paranoid is $paranoid); run as root, or allow it: sysctl kernel.perf_event_paranoid=1"
fi
tools=${SELFBENCH_TOOLS:-/var/tmp/yardstick-selfbench}
if [ ! -x "$tools/bin/inferno-flamegraph" ]; then
    say "building inferno 0.12.8 with cargo install (once, into $tools)"
    # runs: cargo
    cargo install inferno --version 0.12.8 --locked --quiet --root "$tools"
fi
bin=${FLAMEGRAPH_BIN:-}
if [ -z "$bin" ]; then
    cargo build --release --quiet
    bin=target/release/yardstick
fi
[ -x "$bin" ] || die "FLAMEGRAPH_BIN=$bin is not an executable; build yardstick or unset it"

mkdir -p "$(dirname "$svg")"
say "profiling: $bin ${args[*]}"
# -N: no copy of the (large) binary into ~/.debug per run. perf exits with
# the run's status, so a refused argument stops here with yardstick's error.
perf record -q -N -e cpu-clock -F "$hz" --call-graph dwarf,16384 -o "$work/perf.data" -- "$bin" "${args[@]}" >&2 ||
    die "the profiled run failed (its error is above)"
# runs: inferno-collapse-perf
perf script -i "$work/perf.data" 2>/dev/null | "$tools/bin/inferno-collapse-perf" >"$folded"
[ -s "$folded" ] || die "perf recorded no samples; run a longer workload"
# runs: inferno-flamegraph
"$tools/bin/inferno-flamegraph" --title "yardstick ${args[*]}" "$folded" >"$svg"

python3 - "$folded" <<'PY'
import collections, sys

# each line: frames from the root, ';'-separated, then the samples' weight
# (cpu-clock: nanoseconds)
own, anywhere, total = collections.Counter(), collections.Counter(), 0
for line in open(sys.argv[1]):
    stack, _, weight = line.rstrip("\n").rpartition(" ")
    weight = int(weight)
    frames = stack.split(";")
    total += weight
    own[frames[-1]] += weight
    for f in set(frames):
        anywhere[f] += weight
print(f"{total / 1e9:.2f} s of CPU sampled")
print("self (on top of the stack):")
for f, w in own.most_common(15):
    print(f"  {100 * w / total:5.1f}%  {f}")
# the frames nearly every sample has (thread start, the worker's loop) say nothing
print("total (anywhere on the stack), yardstick's functions under 95% of the samples:")
mine = [
    (f, w)
    for f, w in anywhere.most_common()
    if f.startswith("yardstick") and w < 0.95 * total
]
for f, w in mine[:20]:
    print(f"  {100 * w / total:5.1f}%  {f}")
PY
echo "flame graph: $svg (folded stacks: $folded)"
