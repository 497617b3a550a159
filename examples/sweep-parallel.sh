#!/bin/sh
# sweep-parallel.sh - run a sweep as N shards with GNU parallel, then merge
# them into one CSV (the same bytes one `atoll sweep` would have written).
#
#   examples/sweep-parallel.sh SPEC.ini OUT.csv [SHARDS [JOBS [SSHLOGINS]]]
#
# SHARDS (default 4) shares of the points run JOBS (default 2) at a time;
# SSHLOGINS (e.g. "2/node1,2/node2", GNU parallel's --sshlogin) spreads them
# over machines that see this directory at the same path. ATOLL names the
# atoll binary (default: atoll on PATH). GNU parallel keeps its state in
# $PARALLEL_HOME (default here: a temporary directory, not ~/.parallel).
set -eu
spec=$1 out=$2 shards=${3:-4} jobs=${4:-2} logins=${5:-}
atoll=${ATOLL:-atoll}
work=$(mktemp -d "${TMPDIR:-/tmp}/atoll-sweep.XXXXXX")
trap 'rm -rf "$work"' EXIT
export PARALLEL_HOME="${PARALLEL_HOME:-$work/parallel-home}"
mkdir -p "$PARALLEL_HOME"
set -- --will-cite --halt now,fail=1 -j "$jobs"
[ -n "$logins" ] && set -- "$@" --sshlogin "$logins" --workdir .
seq 1 "$shards" | parallel "$@" "$atoll" sweep "$spec" --shard "{}/$shards" -o "$work/shard-{}.csv"
"$atoll" sweep merge --spec "$spec" -o "$out" "$work"/shard-*.csv
