#!/bin/bash
# Submit a class to Slurm: the grading array (grade.sbatch, one shard per task) and the collect
# job that depends on it (collect.sbatch), each asking for what the partition's nodes have.
#
#   cd ~/attention-harness           # from the repository root (the jobs run there)
#   tools/slurm/submit.sh [--shards N] [--gpus] [--cpus N] [--partition P] [--wait] [--logs DIR] \
#       SUBMISSIONS OUT_ROOT [HIDDEN_FILE] [more `grader batch` flags ...]
#
# Without a hidden file the batch flags follow OUT_ROOT (a third argument starting with '-' is
# a flag, e.g. `... SUBMISSIONS OUT_ROOT --timestamps times.csv`). --logs DIR is created.
#
# CPUs per shard: --cpus N, else the smallest node of the partition (sinfo), at most 16 (a
# shard runs `--jobs` compiles at once; more rarely helps). A request larger than every node
# would pend forever, so it is refused here with the nodes' sizes. --gpus asks one GPU per
# shard (--gres=gpu:1). Prints the two job ids; --wait returns when the collect job has ended,
# with its exit status. Shard K writes OUT_ROOT/shard-K, collect writes OUT_ROOT/all;
# GRADER_COLLECT_FLAGS (e.g. --no-pdf) go to `grader collect`.
set -euo pipefail
shards=8 gpus=0 cpus="" partition="" wait=0 logs=""
while [ $# -gt 0 ]; do
    case "$1" in
        --shards) shards=$2; shift 2 ;;
        --gpus) gpus=1; shift ;;
        --cpus) cpus=$2; shift 2 ;;
        --partition) partition=$2; shift 2 ;;
        --wait) wait=1; shift ;;
        --logs) logs=$2; shift 2 ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) break ;;
    esac
done
subs=${1:?usage: tools/slurm/submit.sh [options] SUBMISSIONS OUT_ROOT [HIDDEN_FILE] [batch flags]}
out_root=${2:?usage: tools/slurm/submit.sh [options] SUBMISSIONS OUT_ROOT [HIDDEN_FILE] [batch flags]}
shift 2
part=(${partition:+--partition=$partition})
# CPUs of each node the partition holds (sinfo's %c: CPUs per node, one line per node)
sizes=$(sinfo -h -N "${part[@]}" -o '%c' 2>/dev/null | tr -d '+' | sort -n | uniq | tr '\n' ' ')
smallest=${sizes%% *}
largest=$(echo "$sizes" | awk '{print $NF}')
if [ -z "$smallest" ]; then
    echo "error: sinfo shows no node${partition:+ in partition $partition}: is this a Slurm login node?" >&2
    exit 2
fi
if [ -z "$cpus" ]; then
    cpus=$(( smallest < 16 ? smallest : 16 ))
elif [ "$cpus" -gt "$largest" ]; then
    echo "error: --cpus $cpus: no node${partition:+ of partition $partition} has that many (CPUs per node:" \
         "$sizes); the jobs would pend forever. Ask for at most $largest." >&2
    exit 2
fi
if [ -n "$logs" ]; then
    # Slurm does not create the folder of --output: a missing one loses every log
    mkdir -p "$logs" || { echo "error: --logs $logs: cannot create that folder" >&2; exit 2; }
    logs=$(cd -- "$logs" >/dev/null && pwd)
fi
gres=()
[ "$gpus" = 1 ] && gres=(--gres=gpu:1)
out=()
[ -n "$logs" ] && out=(--output="$logs/grade-%a.log")
job=$(sbatch --parsable "${part[@]}" --array="1-$shards" --cpus-per-task="$cpus" "${gres[@]}" "${out[@]}" \
          tools/slurm/grade.sbatch "$subs" "$out_root" "$@")
job=${job%%;*}
echo "grading array: job $job ($shards shards, $cpus CPUs each${gres:+, one GPU each}; CPUs per node: $sizes)"
out=()
[ -n "$logs" ] && out=(--output="$logs/collect.log")
w=()
[ "$wait" = 1 ] && w=(--wait)
echo "why a job waits: squeue -j $job -o '%i %T %r'"
status=0
collect=$(sbatch --parsable "${part[@]}" "${w[@]}" --dependency="afterany:$job" "${out[@]}" \
              tools/slurm/collect.sbatch "$out_root" ${GRADER_COLLECT_FLAGS:-}) || status=$?
echo "collect: job ${collect%%;*} (after the array; writes $out_root/all)${w:+; ended with status $status}"
exit $status
