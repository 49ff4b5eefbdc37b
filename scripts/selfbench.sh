#!/usr/bin/env bash
# Measures the harness itself: YCSB workloads A and C against null:// at 1, 2
# and 16 threads, side by side in one invocation. Prints operations per second,
# process CPU per operation (the client's whole cost: key choice, value
# generation, timing, recording, status line), the run's peak memory and the
# floor the run measured at its start (two time stamps and one record into
# a histogram, the part of an operation no harness avoids, on this host at
# this moment), of the median of three runs.
# Then, against the test servers (scripts/services starts them), the peers
# side by side, median of 6 rounds (each tool first in half of them): Redis
# GET and SET of 1 KB values against redis-benchmark (16 connections from
# one thread, pipeline depth 1 and 16, the server on one core and the client
# on the other, with the server's CPU per command), and PostgreSQL point selects against
# pgbench -S -M prepared (16 connections, 2 threads), each with its client
# CPU per operation (the peer's from getrusage of its process) and the
# ratios yardstick / peer.
# Last, Cassandra inserts against latte (built here with cargo install, into
# $SELFBENCH_TOOLS), same row shape and concurrency: each tool's own
# throughput; client CPU per insert and peak memory of the whole process
# (start-up included), both read from outside by getrusage.
# Usage: scripts/selfbench.sh [OPERATIONCOUNT]   (default 20000000 per null:// run)
#        SELFBENCH_PEER_OPS=N (default 400000 per peer run), SELFBENCH_PEERS=0 skips them
#        SELFBENCH_ROUNDS=N (default 6): rounds of each peer comparison (each
#        tool runs first in every other round; three times as many at Redis
#        depth 16, where the server is the limit and moves between runs)
#        SELFBENCH_CQL_OPS=N (default 200000 inserts per run), SELFBENCH_CQL=0 skips Cassandra
#        SELFBENCH_TOOLS=DIR (default /var/tmp/yardstick-selfbench): where latte is built
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh
usage="usage: scripts/selfbench.sh [OPERATIONCOUNT]"
# whole NAME VALUE DEFAULT: nothing when VALUE is a positive whole number,
# else a one-line error
whole() {
    case $2 in
    '' | *[!0-9]*) false ;;
    *) [ "$2" -gt 0 ] ;;
    esac || die "$1=$2 is not a positive whole number; try the default, $3"
}
[ $# -le 1 ] || die "too many arguments; $usage"
case ${1:-} in -*) die "unknown option $1; $usage" ;; esac
ops=${1:-20000000}
peer_ops=${SELFBENCH_PEER_OPS:-400000}
# rounds of each comparison: at depth 16 both Redis clients run the server
# at its limit and the host's speed decides the ratio; 3 rounds read from
# 0.87x to 1.02x for the same build within an hour
rounds=${SELFBENCH_ROUNDS:-6}
cql_ops=${SELFBENCH_CQL_OPS:-200000}
whole OPERATIONCOUNT "$ops" 20000000
whole SELFBENCH_PEER_OPS "$peer_ops" 400000
whole SELFBENCH_ROUNDS "$rounds" 6
whole SELFBENCH_CQL_OPS "$cql_ops" 200000
cargo build --release --quiet
bin=target/release/yardstick
out=$(mktemp -d)
# the Redis server's cores, when the Redis rows pinned it; restored at any exit
unpin=
trap '[ -z "$unpin" ] || taskset -pc "$unpin" "$redis_pid" >/dev/null; rm -rf "$out"' EXIT
printf '%-28s %8s %14s %14s %10s %10s %8s\n' "workload" "threads" "ops/s" "CPU ns/op" "peak MiB" "floor ns" "cores"
for spec in "C:workloadc:" "A:workloada:" "A, 1 KB updates:workloada:writeallfields=true"; do
    IFS=: read -r label wl extra <<<"$spec"
    # three rounds of 1, 2 and 16 threads in turn, so that the host's drift
    # over the minutes of a workload's runs falls on every thread count
    # alike; each row shows the run of median CPU per operation (one run
    # moves with the host: 82 to 104 ns for workload C within minutes)
    # and 1 and 2 threads for a fixed 1.5 s ("d"), where every thread works
    # to the end: with operationcount each thread does its even share (as
    # YCSB splits it), and on a host that slows one core the other thread
    # finishes first and waits
    kinds=(1 2 16 d1 d2)
    for t in "${kinds[@]}"; do : >"$out/n$t"; done
    for _ in 1 2 3; do
        for t in "${kinds[@]}"; do
            args=(run --db null:// -P "$wl" -p recordcount=1000000 --threads "${t#d}" -q --format json --out "$out/r.json")
            case $t in
            d*) args+=(--duration 1500ms) ;;
            *) args+=(-p "operationcount=$ops") ;;
            esac
            [ -n "$extra" ] && args+=(-p "$extra")
            # runs: yardstick
            "$bin" "${args[@]}" 2>/dev/null |
                python3 -c 'import json,sys; r=json.load(sys.stdin); c=r["client"]; print("%.0f %.1f %.1f %.0f %.2f" % (r["totals"]["ops_per_sec"], c["cpu_ns_per_op"], c["peak_rss_bytes"] / 2**20, c["floor"]["ns_per_op"], c["cpu_cores_used"]))' >>"$out/n$t"
        done
    done
    for t in 1 2 16; do
        sort -n -k2 "$out/n$t" | sed -n 2p |
            {
                read -r rate ns mib floor cores
                printf '%-28s %8s %14s %14.0f %10s %10s %8s\n' "$label" "$t" "$rate" "$ns" "$mib" "$floor" "$cores"
            }
    done
    # 2 threads against 1, median of the rounds' own ratios: of ops/s
    # (linear is 2.00x where the host gives the run two whole cores; other
    # processes, a test server's JVM among them, and the host's other
    # guests take from it) and of ops/s per core the run got (the harness's
    # own scaling: 1.00x when a second thread costs the first nothing)
    python3 - "$label" "$out/n1" "$out/n2" "$out/nd1" "$out/nd2" <<'PY'
import statistics as st, sys
one, two, d1, d2 = ([list(map(float, l.split())) for l in open(f)] for f in sys.argv[2:6])
def ratios(one, two):
    rate = st.median(b[0] / a[0] for a, b in zip(one, two))
    per_core = st.median((b[0] / b[4]) / (a[0] / a[4]) for a, b in zip(one, two))
    return rate, per_core, st.median(b[4] for b in two)
print("%-28s 2 threads / 1: %.2fx ops/s, %.2fx ops/s per core used (%.2f cores); for 1.5 s: %.2fx, %.2fx (%.2f cores)"
      % ((sys.argv[1],) + ratios(one, two) + ratios(d1, d2)))
PY
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
    sort -n -k2 "$out/$mode" | sed -n 2p | {
        read -r rate ns b
        printf '%-28s %14s %14s %14s\n' "$mode" "$rate" "$ns" "$b"
    }
done
python3 - "$out/plain" "$out/traced" <<'PY'
import sys
med = lambda f: sorted(float(l.split()[1]) for l in open(f))[1]
print("added client CPU with --trace: %+.1f%%" % (100 * (med(sys.argv[2]) / med(sys.argv[1]) - 1)))
PY

[ "${SELFBENCH_PEERS:-1}" = 0 ] && exit 0

# --- the peers on the test servers ------------------------------------------
need redis-benchmark redis-cli pgbench
scripts/services start redis postgres >/dev/null
pg_dir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
redis_port=$(scripts/services url redis | sed 's/.*://')
pg_url=$(scripts/services url postgres)

# cpu_of OUT CMD...: runs CMD (in $CPU_OF_DIR when set), its output to OUT; prints its CPU seconds
# (user + system), wall seconds and peak RSS in MiB. The peak is the
# process's own VmHWM, read while it runs: getrusage's maxrss would count
# the forking Python's pages (13 MiB) for the child.
cpu_of() {
    local out=$1
    shift
    python3 -c 'import os,subprocess,sys,time
t=time.time(); p=subprocess.Popen(sys.argv[2:], stdout=open(sys.argv[1],"w"), stderr=subprocess.STDOUT, cwd=os.environ.get("CPU_OF_DIR"))
hwm=0
while True:
    try:
        for l in open("/proc/%d/status" % p.pid):
            if l.startswith("VmHWM:"): hwm=max(hwm, int(l.split()[1]))
    except OSError: pass
    pid, status, r = os.wait4(p.pid, os.WNOHANG)
    if pid: break
    time.sleep(0.005)
print("%.3f %.3f %.1f" % (r.ru_utime + r.ru_stime, time.time() - t, hwm / 1024)); sys.exit(os.waitstatus_to_exitcode(status))' "$out" "$@"
}

# yardstick_rate JSON: "ops/s CPU-ns/op" of a result
yardstick_rate() {
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%.0f %.0f" % (r["totals"]["ops_per_sec"], r["client"]["cpu_ns_per_op"]))' "$1"
}

# peer_rate OPS/S CPU-SECONDS: appends a peer run's "ops/s CPU-ns/op" ($peer_ops operations) to $out/p
peer_rate() {
    python3 -c "import sys; print('%s %.0f' % (sys.argv[1], float(sys.argv[2]) * 1e9 / int(sys.argv[3])))" "$1" "$2" "$peer_ops" >>"$out/p"
}

# yardstick_first ROUND: whether yardstick runs first in this round (odd
# rounds; the peer first in even ones). Which run of a pair gains is not
# steady on this host (yardstick against redis-benchmark at depth 16 read
# 0.95x when first and 1.06x when second in ten rounds, 1.02x and 0.93x in
# the next twelve); with one order every round, any such edge went to the
# same tool in every row.
yardstick_first() {
    (($1 % 2))
}

# row LABEL FILE-OF-YARDSTICK-LINES FILE-OF-PEER-LINES: medians of "ops/s
# CPU-ns" lines, and each ratio the median of the rounds' own ratios (line k
# of one file against line k of the other: the two runs of a round are
# seconds apart, so the host's drift over the minutes of the rows cancels
# out), with the first and third quartiles of the rounds' first ratios (the
# host's noise, seen); a third column (peak MiB), when there, is printed beside
row() {
    python3 - "$@" <<'PY'
import statistics as st, sys
label, ys, peer = sys.argv[1], sys.argv[2], sys.argv[3]
def rows(f):
    return [tuple(map(float, l.split())) for l in open(f) if l.strip()]
def med(rs):
    return [st.median(r[i] for r in rs) for i in range(len(rs[0]))]
yr, pr = rows(ys), rows(peer)
y, p = med(yr), med(pr)
ratio = [st.median(a[i] / b[i] for a, b in zip(yr, pr)) for i in (0, 1)]
# the spread of the rounds' first ratios: their first and third quartiles
first = [a[0] / b[0] for a, b in zip(yr, pr)]
q1, _, q3 = st.quantiles(first, n=4) if len(first) > 1 else first * 3
line = "%-34s %10.0f %10.0f %8.2fx %11s %8.0f %8.0f %8.2fx" % (
    label, y[0], p[0], ratio[0], "%.2f-%.2f" % (q1, q3), y[1], p[1], ratio[1])
if len(y) > 2:
    line += " %8.1f %8.1f" % (y[2], p[2])
print(line)
PY
}

echo
printf '%-34s %10s %10s %9s %11s %8s %8s %9s\n' "peer comparison (16 connections)" "ops/s" "peer" "ratio" "q1-q3" "CPU ns" "peer" "ratio"
# Each tool's keys in a database of its own, emptied first: Redis adds a
# key at the head of its hash bucket's chain, so in one database the keys
# written first sat behind the other tool's, and every lookup of them
# walked past those. yardstick's were written first: the server's time in
# the command itself (INFO commandstats, usec_per_call) read 1.06x-1.075x
# for yardstick's keys (20 alternating pairs each of SET and GET at depth
# 16), 1.02x with a database each; the throughput ratio 0.96x and 0.99x,
# then 1.00x and 1.02x.
ys_db=14 peer_db=15
for db in "$ys_db" "$peer_db"; do
    # the password through the environment, not the process list
    # runs: redis-cli
    REDISCLI_AUTH=benchpw redis-cli -p "$redis_port" -n "$db" flushdb >/dev/null
done
redis_url="redis://:benchpw@127.0.0.1:$redis_port/$ys_db"
# yardstick's keys as long as redis-benchmark's, 16 bytes (k:user and ten
# digits, against key: and twelve), uniform over 100,000 of them, 1 KB
# values: the same bytes for the server to parse, hash and compare per
# command. YCSB's hashed keys under the prefix were 33 bytes: a GET was 53
# bytes on the wire against 36, and its reply was the same.
redis_keys=(-p recordcount=100000 -p insertorder=ordered -p zeropadding=10 -p fieldcount=1 -p fieldlength=1000)
# runs: yardstick
"$bin" load --db "$redis_url?model=string&prefix=k:" -P workloadc "${redis_keys[@]}" --batch 1000 -q --out "$out/load.json" >/dev/null
# Redis's one thread on one core and either client on the other, when the
# host has two, as a server and its load generator are placed for a
# measurement: neither waits for the other's core, and both tools run in the
# same places. At depth 16 the server is the limit for both clients, so its
# own CPU per command under each, and how busy that kept it, are shown too.
redis_pid=$(cat "${YARDSTICK_SERVICES_DIR:-/tmp/yardstick-services}/redis/redis.pid")
# on_client: the prefix that runs a client on the other core
on_client=()
if [ "$(nproc)" -ge 2 ]; then
    need taskset
    unpin=$(taskset -pc "$redis_pid" | sed 's/.*: //')
    taskset -pc 0 "$redis_pid" >/dev/null
    on_client=(taskset -c 1)
fi
# server_snap: the nanoseconds the Redis server's main thread (which serves
# every command) has run so far (/proc/PID/stat counts 10 ms ticks)
server_snap() {
    local ran _
    read -r ran _ <"/proc/$redis_pid/schedstat"
    echo "$ran"
}
# server_use BEFORE RATES FILE: appends to FILE the server's CPU per command
# since BEFORE (a server_snap; $peer_ops commands, start-up included) and
# how busy that kept it at the client's measured rate (the last line of
# RATES): near 100%, the server is the limit
server_use() {
    local now
    now=$(server_snap)
    python3 -c 'import sys
c0, c1 = float(sys.argv[1]), float(sys.argv[2])
ns = (c1 - c0) / int(sys.argv[3]); rate = float(sys.argv[4].split()[0])
print("%.0f %.1f" % (ns, ns * rate / 1e7))' "$1" "$now" "$peer_ops" "$(tail -1 "$2")" >>"$3"
}
# redis-benchmark's own keys, drawn at random: 1,000,000 draws leave ~5 of
# its 100,000 keys unwritten (200,000 left 13%: GETs answered nil,
# 5 bytes instead of 1 KB, cheaper for the peer than for yardstick)
redis-benchmark -h 127.0.0.1 -p "$redis_port" -a benchpw --dbnum "$peer_db" -t set -r 100000 -n 1000000 -d 1000 -c 16 -P 16 -q >/dev/null
for depth in 1 16; do
    for test in get set; do
        : >"$out/y" && : >"$out/p"
        srv=$out/server-$test-$depth
        : >"$srv.y" && : >"$srv.p"
        mix=(-p readproportion=1 -p updateproportion=0)
        [ "$test" = set ] && mix=(-p readproportion=0 -p updateproportion=1 -p writeallfields=true -p update.semantics=upsert)
        # 16 connections with DEPTH requests in flight on each, from one
        # thread as redis-benchmark's (two threads took CPU from the
        # server on this 2-core host: 0.93x its throughput against 0.95x
        # for GET, 0.93x against 0.99x for SET, at depth 16)
        redis_yardstick() {
            local before
            before=$(server_snap)
            # runs: taskset yardstick
            "${on_client[@]}" "$bin" run --db "$redis_url?model=string&prefix=k:&pipeline=$depth" -P workloadc "${redis_keys[@]}" \
                -p requestdistribution=uniform -p "operationcount=$peer_ops" "${mix[@]}" \
                --threads 1 --concurrency $((16 * depth)) -q --out "$out/r.json" >/dev/null
            yardstick_rate "$out/r.json" >>"$out/y"
            server_use "$before" "$out/y" "$srv.y"
        }
        redis_peer() {
            local cpu wall rate before
            before=$(server_snap)
            # runs: taskset redis-benchmark
            read -r cpu wall _ < <(cpu_of "$out/peer.txt" "${on_client[@]}" redis-benchmark -h 127.0.0.1 -p "$redis_port" -a benchpw \
                --dbnum "$peer_db" -t "$test" -r 100000 -n "$peer_ops" -d 1000 -c 16 -P "$depth" -q)
            rate=$(grep -o '[0-9.]* requests per second' "$out/peer.txt" | tail -1 | cut -d' ' -f1)
            peer_rate "$rate" "$cpu"
            server_use "$before" "$out/p" "$srv.p"
        }
        # at depth 16 the server is the limit under either client and its
        # CPU per command moves by +-10% between runs of one client: three
        # times the rounds (1 s runs) for the median's sake
        n=$rounds
        [ "$depth" = 1 ] || n=$((3 * rounds))
        for round in $(seq "$n"); do
            if yardstick_first "$round"; then
                redis_yardstick
                redis_peer
            else
                redis_peer
                redis_yardstick
            fi
        done
        row "Redis ${test^^} 1 KB, depth $depth" "$out/y" "$out/p"
    done
done
# the server is the limit where it is busy (near 100%) under both clients
echo
printf '%-34s %10s %10s %9s %11s %8s %8s %9s\n' "Redis server under each client" "CPU ns/cmd" "peer" "ratio" "q1-q3" "busy %" "peer" "ratio"
for depth in 1 16; do
    for test in get set; do
        row "Redis ${test^^} 1 KB, depth $depth" "$out/server-$test-$depth.y" "$out/server-$test-$depth.p"
    done
done
# the server's cores back as they were
[ -z "$unpin" ] || taskset -pc "$unpin" "$redis_pid" >/dev/null
unpin=

# pgbench's accounts: 1,000,000 rows at scale 10; yardstick's table the same size
# runs: pgbench
"$pg_dir/pgbench" -i -s 10 -q "$pg_url" >/dev/null 2>&1
"$bin" load --db "$pg_url" -P workloadc -p table=selfbench -p recordcount=1000000 -p fieldcount=1 -p fieldlength=84 \
    --batch 1000 --threads 2 --clear -q --out "$out/load.json" >/dev/null
pg_yardstick() {
    # runs: yardstick
    "$bin" run --db "$pg_url" -P workloadc -p table=selfbench -p recordcount=1000000 -p fieldcount=1 -p fieldlength=84 \
        -p requestdistribution=uniform -p "operationcount=$peer_ops" --threads 2 --concurrency 8 -q --out "$out/r.json" >/dev/null
    yardstick_rate "$out/r.json" >>"$out/y"
}
pg_peer() {
    local cpu wall rate
    # runs: pgbench
    read -r cpu wall _ < <(cpu_of "$out/peer.txt" "$pg_dir/pgbench" -S -M prepared -c 16 -j 2 -t $((peer_ops / 16)) "$pg_url")
    rate=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$out/peer.txt" | tail -1)
    peer_rate "$rate" "$cpu"
}
: >"$out/y" && : >"$out/p"
for round in $(seq "$rounds"); do
    if yardstick_first "$round"; then
        pg_yardstick
        pg_peer
    else
        pg_peer
        pg_yardstick
    fi
done
row "PostgreSQL point select" "$out/y" "$out/p"

# --- Cassandra inserts against latte ------------------------------------------
[ "${SELFBENCH_CQL:-1}" = 0 ] && exit 0
tools=${SELFBENCH_TOOLS:-/var/tmp/yardstick-selfbench}
latte=$tools/bin/latte
if [ ! -x "$latte" ]; then
    say "building latte 0.29.0 with cargo install (once, into $tools)"
    # runs: cargo
    cargo install latte-cli --version 0.29.0 --locked --quiet --root "$tools"
fi
scripts/services start cassandra >/dev/null
cql_node=$(scripts/services url cassandra | sed 's#cql://##; s#/.*##')
# YCSB's row with one 100-byte field, as yardstick loads it: latte inserts
# the same shape (a text key "user" + a 64-bit hash, a 100-byte blob), with
# plain INSERTs as yardstick's upsert semantics send them.
cat >"$out/latte.rn" <<'RN'
const INSERT = "insert";

pub async fn schema(db) {
    db.execute("CREATE KEYSPACE IF NOT EXISTS selfbench_latte WITH REPLICATION = { 'class' : 'SimpleStrategy', 'replication_factor' : 1 }").await?;
    db.execute("DROP TABLE IF EXISTS selfbench_latte.usertable").await?;
    db.execute("CREATE TABLE selfbench_latte.usertable (y_id text PRIMARY KEY, field0 blob)").await?;
}

pub async fn prepare(db) {
    db.prepare(INSERT, "INSERT INTO selfbench_latte.usertable (y_id, field0) VALUES (:y_id, :field0)").await?;
}

pub async fn run(db, i) {
    db.execute_prepared(INSERT, [`user${latte::hash(i)}`, latte::blob(i, 100)]).await?
}
RN
echo
printf '%-34s %10s %10s %9s %11s %8s %8s %9s %8s %8s\n' "Cassandra inserts (256 in flight)" "ops/s" "latte" "ratio" "q1-q3" "CPU ns" "latte" "ratio" "MiB" "latte"
cql_peer() {
    local cpu wall rss
    # latte writes its logs where it runs: in the scratch directory
    # runs: latte
    (cd "$out" && "$latte" schema "$out/latte.rn" "$cql_node" >/dev/null 2>&1)
    read -r cpu wall rss < <(CPU_OF_DIR=$out cpu_of "$out/peer.txt" "$latte" run "$out/latte.rn" -d "$cql_ops" -w 0 -t 1 -p 256 -q \
        -o "$out/latte.json" "$cql_node")
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["result"]
print("%.0f %.0f %s" % (r["cycle_throughput"]["value"], float(sys.argv[2]) * 1e9 / r["cycle_count"], sys.argv[3]))' \
        "$out/latte.json" "$cpu" "$rss" >>"$out/p"
}
cql_yardstick() {
    local cpu wall rss
    # runs: yardstick
    read -r cpu wall rss < <(cpu_of "$out/ys.txt" "$bin" load --db "cql://$cql_node/selfbench_ys" -P workloadc \
        -p recordcount="$cql_ops" -p fieldcount=1 -p fieldlength=100 -p insert.semantics=upsert \
        --threads 1 --concurrency 256 --clear -q --out "$out/r.json")
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["totals"]
print("%.0f %.0f %s" % (r["ops_per_sec"], float(sys.argv[2]) * 1e9 / r["operations"], sys.argv[3]))' \
        "$out/r.json" "$cpu" "$rss" >>"$out/y"
}
: >"$out/y" && : >"$out/p"
for round in $(seq "$rounds"); do
    if yardstick_first "$round"; then
        cql_yardstick
        cql_peer
    else
        cql_peer
        cql_yardstick
    fi
done
row "insert, 1 field of 100 B" "$out/y" "$out/p"
