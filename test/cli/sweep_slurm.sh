# sweep_slurm.sh - the Slurm recipe (examples/sweep-slurm.sbatch) on a real
# single-node Slurm cluster that this script starts and stops itself
# (Debian's slurmctld, slurmd and slurm-client, which .ci/run installs; the
# test installs nothing): a 2-task job array runs the shards of
# examples/sweep-tiny.ini, `atoll sweep merge` joins them, and the result
# equals the single-machine CSV byte for byte.
#
# The cluster: Slurm 22.05 without systemd or munge (auth/none, cred/none),
# every state, spool, log and pid file under $TMPD, free ports chosen now,
# one node "localhost" with 2 CPUs shared per CPU (CR_CPU). It is stopped
# by pid: jobs cancelled and drained, then slurmd, then slurmctld.
. test/cli/lib.inc
for t in slurmctld slurmd sbatch sinfo squeue scancel; do
    command -v $t > /dev/null || { fail slurm_installed "$t is not installed (.ci/run installs slurmctld slurmd slurm-client)"; cli_summary sweep_slurm; exit 1; }
done
ok slurm_installed
S=$PWD/examples/sweep-tiny.ini
ATOLL_ABS=$(cd "$(dirname "$ATOLL")" && pwd)/$(basename "$ATOLL")
T=$TMPD/slurm
mkdir -p "$T/state" "$T/spool" "$T/out"

# two TCP ports nobody listens on (from /proc/net/tcp*, in hex)
listening() { cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk 'NR > 1 && $4 == "0A" { split($2, a, ":"); print a[2] }'; }
free_port() {
    p=$(( $(od -An -N2 -tu2 /dev/urandom) % 20000 + 30000 ))
    while listening | grep -qi "^$(printf %04X $p)\$" || [ "$p" = "${1:-0}" ]; do p=$((p + 1)); done
    echo $p
}
P1=$(free_port); P2=$(free_port $P1)
cat > "$T/slurm.conf" <<EOF
ClusterName=atolltest$P1
SlurmctldHost=localhost
SlurmctldPort=$P1
SlurmdPort=$P2
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MailProg=/bin/true
MinJobAge=5
SchedulerParameters=batch_sched_delay=0
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=atoll Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$T/slurm.conf"
ctld=; sd=
stop_cluster() {
    if [ -n "$ctld$sd" ]; then
        scancel --quiet --user=root 2>/dev/null
        i=0; while [ $i -lt 60 ] && [ -n "$(squeue -h 2>/dev/null)" ]; do sleep 0.5; i=$((i + 1)); done
        [ -n "$sd" ] && kill "$sd" 2>/dev/null && wait "$sd" 2>/dev/null
        [ -n "$ctld" ] && kill "$ctld" 2>/dev/null && wait "$ctld" 2>/dev/null
        ctld=; sd=
    fi
}
trap stop_cluster EXIT
slurmctld -D -c -i -f "$SLURM_CONF" > "$T/slurmctld.out" 2>&1 &
ctld=$!
slurmd -D -N localhost -f "$SLURM_CONF" > "$T/slurmd.out" 2>&1 &
sd=$!
pids="$ctld $sd"
i=0
while [ $i -lt 60 ] && [ "$(sinfo -h -o %t 2>/dev/null)" != "idle" ]; do sleep 0.5; i=$((i + 1)); done
if [ "$(sinfo -h -o %t 2>/dev/null)" = "idle" ]; then ok cluster_up
else fail cluster_up "node not idle after 30 s: $(sinfo 2>&1 | head -3) $(tail -5 "$T/slurmctld.log" "$T/slurmd.log" 2>&1)"; fi

# the recipe: one array task per shard, then merge
expect_ok sbatch_array env ATOLL="$ATOLL_ABS" sbatch --wait --array=1-2 --chdir="$T/out" --output="$T/out/task-%a.log" \
    examples/sweep-slurm.sbatch "$S" "$T/out"
n=$(ls "$T/out"/shard-*.csv 2>/dev/null | wc -l)
if [ "$n" -eq 2 ]; then ok two_shard_files; else fail two_shard_files "$n shard files; logs: $(cat "$T/out"/task-*.log 2>&1 | head -c 600)"; fi
expect_grep task_log_progress 'sweep: wrote' "$T/out/task-1.log"
expect_ok merge "$ATOLL" sweep merge --spec "$S" -o "$T/merged.csv" "$T/out"/shard-*.csv
expect_ok single_machine "$ATOLL" sweep "$S" -o "$T/single.csv"
if cmp -s "$T/single.csv" "$T/merged.csv"; then ok slurm_merge_same_bytes; else fail slurm_merge_same_bytes "$(diff "$T/single.csv" "$T/merged.csv" | head -5)"; fi
# the recipe refuses to run outside an array
expect_fail needs_array "submit with sbatch --array=1-N" sh examples/sweep-slurm.sbatch "$S" "$T/out"
stop_cluster
alive=""; for p in $pids; do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
if [ -z "$alive" ]; then ok cluster_stopped; else fail cluster_stopped "still running:$alive"; fi
cli_summary sweep_slurm
