#!/bin/sh
# run.sh N [DELAY_SECONDS]: starts the Indexed Job of job.yaml with N instances,
# all measuring from DELAY_SECONDS (default 90) from now, so every pod is
# scheduled and connected before the clock starts.
set -eu
n=${1:?usage: run.sh INSTANCES [DELAY_SECONDS]}
delay=${2:-90}
here=$(dirname "$0")
start=$(date -u -d "@$(( $(date +%s) + delay ))" +%Y-%m-%dT%H:%M:%SZ)
sed -e "s/: 3 # INSTANCES/: $n # INSTANCES/" \
    -e "s/\"3\" # INSTANCES/\"$n\" # INSTANCES/" \
    -e "s/\"2030-01-01T00:00:00Z\" # START_AT/\"$start\" # START_AT/" \
    "$here/job.yaml" | kubectl apply -f -
echo "run.sh: $n instances start measuring at $start; then: $here/collect.sh"
