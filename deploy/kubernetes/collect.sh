#!/bin/sh
# collect.sh [JOB] [DIR]: saves each pod's log, extracts the result file the
# pod printed between markers into DIR/instances/, and merges them into
# DIR/merged.json.
# With LOGS_FROM=DIR, reads *.log files from DIR instead of kubectl (tests).
set -eu
job=${1:-yardstick}
dir=${2:-results/k8s-$job}
mkdir -p "$dir/logs" "$dir/instances"
if [ -n "${LOGS_FROM:-}" ]; then
    for f in "$LOGS_FROM"/*.log; do cp "$f" "$dir/logs/"; done
else
    kubectl wait --for=condition=complete --timeout=24h "job/$job" || true
    for pod in $(kubectl get pods -l "job-name=$job" -o name); do
        kubectl logs "$pod" > "$dir/logs/$(basename "$pod").log"
    done
fi
found=0
for log in "$dir"/logs/*.log; do
    json="$dir/instances/$(basename "${log%.log}").json"
    sed -n '/^-----BEGIN YARDSTICK RESULT/,/^-----END YARDSTICK RESULT-----$/p' "$log" | sed '1d;$d' > "$json"
    if [ -s "$json" ]; then
        found=$((found + 1))
    else
        echo "collect.sh: $log holds no result (the pod failed before writing one); see the log" >&2
        rm -f "$json"
    fi
done
if [ "$found" -eq 0 ]; then
    echo "collect.sh: no results in $dir" >&2
    exit 1
fi
if [ "$found" -eq 1 ]; then
    echo "collect.sh: only one result in $dir; nothing to merge" >&2
    exit 1
fi
"${YARDSTICK:-yardstick}" merge "$dir"/instances/*.json -o "$dir/merged.json"
