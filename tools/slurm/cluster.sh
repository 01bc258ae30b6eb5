#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, for trying the grading array for real:
# munged, slurmctld and slurmd started directly (no systemd), every file under STATE_DIR.
#
#   tools/slurm/cluster.sh start STATE_DIR     # prints: export SLURM_CONF=STATE_DIR/slurm.conf
#   tools/slurm/cluster.sh stop  STATE_DIR
#
# Needs root and the Debian packages slurm-wlm and munge (apt install slurm-wlm munge).
# The node offers this machine's CPUs and no GPU: jobs run as the submitting user.
set -euo pipefail
action=${1:?usage: cluster.sh start|stop STATE_DIR}
STATE=$(realpath -m "${2:?usage: cluster.sh start|stop STATE_DIR}")

stop() {
    for pidfile in "$STATE/slurmd.pid" "$STATE/slurmctld.pid" "$STATE/munged.pid"; do
        if [ -s "$pidfile" ]; then
            pid=$(cat "$pidfile")
            kill "$pid" 2>/dev/null || true
            for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            rm -f "$pidfile"
        fi
    done
}

if [ "$action" = stop ]; then stop; exit 0; fi
[ "$action" = start ] || { echo "usage: cluster.sh start|stop STATE_DIR" >&2; exit 2; }
for tool in munged slurmctld slurmd sinfo; do
    command -v "$tool" >/dev/null || { echo "error: $tool not found: apt install slurm-wlm munge" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "error: starting slurmd needs root" >&2; exit 2; }

stop
mkdir -p -m 700 "$STATE"
mkdir -p "$STATE/ctld" "$STATE/spool"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
host=$(hostname -s)
cpus=$(nproc)        # = len(os.sched_getaffinity(0)), what check_class.py asks per shard
mem_mb=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024 ))

# munge: its own key and socket, so no system munged is needed or disturbed
[ -s "$STATE/munge.key" ] || { dd if=/dev/urandom of="$STATE/munge.key" bs=1024 count=1 status=none; chmod 400 "$STATE/munge.key"; }
munged --force --socket="$STATE/munge.socket" --key-file="$STATE/munge.key" --pid-file="$STATE/munged.pid" \
       --log-file="$STATE/munged.log" --seed-file="$STATE/munged.seed"

cat > "$STATE/slurm.conf" <<CONF
ClusterName=grader-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$STATE/munge.socket
CredType=cred/munge
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/spool
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/slurmctld.log
SlurmdLogFile=$STATE/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$STATE/slurm.conf"
slurmctld -c        # -c: a fresh cluster, no saved state
slurmd
for _ in $(seq 100); do
    if sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then
        echo "export SLURM_CONF=$SLURM_CONF"
        exit 0
    fi
    sleep 0.2
done
echo "error: the node did not come up; see $STATE/slurmctld.log and $STATE/slurmd.log" >&2
tail -5 "$STATE/slurmctld.log" "$STATE/slurmd.log" >&2 || true
stop
exit 1
