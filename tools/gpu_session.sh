#!/usr/bin/env bash
# Everything the GPU machine must show (the GPU verification issue), in as few calls as possible.
#
#   tools/gpu_session.sh [phase ...]
#
# phases (default: setup system grade tests; all: every phase below):
#   setup       install the carried wheels (.whl: typst, pypdf, jsonschema and its needs) and the
#               carried bubblewrap (.cache/carry/bwrap and the libraries it links), then the
#               sandbox's self-test as root (uid, capabilities, the GPU nodes it binds)
#   system      GPU, driver, clocks, torch, cores
#   grade       make grade of reference/fused.cu (cold cache: binding module, kernel, references)
#   tests       pytest -m gpu, all of it (red-team --gpu class, third-party corpus, batch on GPU 0),
#               one pytest per file (TESTS="files" those alone; TESTS_<stem>=seconds each)
#   redteam     tools/redteam.py --gpu (ONLY=regex: those attacks alone, e.g. '^gpu_')
#   corpus      tools/corpus.py --kind cuda: verdict, tier, compile time, speed of every CUDA kernel
#   bench       make bench-reference           fidelity   tools/fidelity.py (5 grades)
#   ab          the launch observation's cost on later timings: tools/profiler_ab.py (AB_N grades per arm)
#   gradetime   make grade beside an older tree (tools/grade_time_ab.py; GRADETIME_OLD, GT_N)
#   batchtime   the batch beside an older tree, GPU 0, sandboxed (GRADETIME_OLD, BT_N kernels, BT_RUNS pairs)
#   compile     changed-_CUDA_SRC compile time (3 edits) and nvcc's phases
#   noisy       a grade alone, then beside a process hammering the same GPU: bench_quality
#   throughput  N (50) submissions batch-graded on GPU 0 with the sandbox (GPUS="0 0,1" for two)
#   profile     make profile of the references (cold and warm exports), kept as fixtures
#   reqcost     where one bench request's seconds go in the child (tools/request_cost.py)
#   spy         a grade of fused.cu under py-spy, judge and child (collapsed stacks: tools/spy_fold.py)
#   sbprof      a GPU batch of one, sandbox off then on: stage seconds and the busiest threads of each
#   heldout     the kernels of HELDOUT (default heldout32/) graded without the benchmark: verdicts, messages
#   beforeafter make profile of reference/naive.cu and reference/fused_tc.cu (the demo's before/after)
#   demo        make demo (the three model reports)
#   lanes       batches of N on each of LANES ("0,1 0") beside thread_cpu.py and py-spy: the two lanes' slowdown
#   tprofile    make profile BACKEND=triton of reference/fused.triton.py (cold and warm exports)
#   triton      the Triton references graded (BACKEND=triton), the Triton known-bad class batch-graded
#               on GPU 0 with the sandbox, and the references' speed vs SDPA (tools/bench_reference.py)
#
# Logs go to $LOGS (/tmp/gpu-logs); at the end they are packed into ONE file,
# $OUT/gpu-<phases>.tar.gz, because the device tool returns at most 8 files. Each phase runs
# under its own time limit (LIMIT_<phase> seconds, default below) and a failing or timed-out
# phase does not stop the others. Carry: .whl and .cache/carry.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-/tmp/gpu-out}
LOGS=${LOGS:-/tmp/gpu-logs}
mkdir -p "$OUT" "$LOGS"
PY=${PY:-python3}

declare -A LIMIT=([setup]=300 [system]=150 [grade]=240 [tests]=1500 [redteam]=580 [corpus]=300 [bench]=120 [fidelity]=400 [ab]=560 [gradetime]=560
                  [compile]=120 [noisy]=300 [throughput]=480 [profile]=240 [beforeafter]=300 [heldout]=300 [sbprof]=560 [demo]=240 [triton]=420 [tprofile]=240 [reqcost]=200 [spy]=300 [batchtime]=560 [lanes]=560)

# a results file's stage seconds and where each GPU size's bench seconds went
stages() {
    $PY -c "import json, sys; d = json.load(open(sys.argv[1])); print('stages', d.get('stage_seconds'))
for S, s in (d.get('timing') or {}).get('bench_seconds_by_S', {}).items(): print('  S', S, s)" "$1"
}

phase() {
case $1 in
triton)
    $PY -c "import triton; print('triton', triton.__version__)"
    # TRITON_GRADES=0: the class batch and the speed table alone (the two grades take ~190 s)
    for f in $([ "${TRITON_GRADES:-1}" = 1 ] && echo naive fused); do
        $PY -m grader grade reference/$f.triton.py --backend triton --json "$LOGS/triton-$f.json" 2>&1 | tail -25
    done
    rm -rf /tmp/triton-class && mkdir -p /tmp/triton-class && cp tests/submissions/triton/*.py /tmp/triton-class/
    cp reference/fused.triton.py /tmp/triton-class/fused_ref.triton.py
    $PY -m grader batch /tmp/triton-class --out "$LOGS/triton-batch" --gpus 0 --sandbox on 2>&1 | tail -12
    cut -d, -f1-4 "$LOGS/triton-batch/grades.csv"
    $PY tools/bench_reference.py --json "$LOGS/bench-triton.json" 2>&1 | tail -60
    ;;
setup)
    if ls .whl/*.whl >/dev/null 2>&1; then
        $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir .whl/*.whl 2>&1 | tail -3
    fi
    $PY -c "import typst, pypdf, jsonschema, pynvml; print('typst, pypdf', pypdf.__version__, 'jsonschema, nvidia-ml-py present')"
    if ! command -v bwrap >/dev/null && [ -x .cache/carry/bwrap ]; then
        install -m 0755 .cache/carry/bwrap /usr/local/bin/bwrap
        for lib in $(ldd /usr/local/bin/bwrap | awk '/not found/ {print $1}'); do
            cp -v ".cache/carry/lib/$lib" /usr/local/lib/ && ldconfig
        done
    fi
    bwrap --version
    $PY - <<'EOF'
import json, tempfile
from pathlib import Path
from grader.isolation.sandbox import Limits, bwrap_path, self_test
with tempfile.TemporaryDirectory() as d:
    print("sandbox self-test:", json.dumps(self_test(bwrap_path(), Path(d) / "w", Limits(), ())))
EOF
    # CUDA initialised inside the sandbox with one GPU's nodes (and if not, what stops it)
    $PY tools/sandbox_gpu_probe.py 0
    ;;
system)
    nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
    $PY -c "import torch; p = torch.cuda.get_device_properties(0); print('torch', torch.__version__, 'cuda', torch.version.cuda, p.name, p.multi_processor_count, 'SMs')"
    nproc; uname -r; id -u; ls /dev/nvidia*
    # the toolchain (where the baseline's file and locale calls come from, and TORCH_CHECK's
    # number formatting crash; on 2026-11-24 libstdc++.so there was no linker script)
    g++ --version | head -1; f=$(g++ -print-file-name=libstdc++.so); echo "libstdc++.so: $f"
    file -L "$f" | grep -q text && head -c 400 "$f"; echo
    # what the do-nothing kernel's library calls (excused in every kernel's library audit)
    $PY - <<'EOF2'
from grader.core.config import load
from grader.judge.judge import public_config
from grader.judge.linkaudit import baseline_objects, header_baseline
cfg = public_config(load())
for kind, tier in (("cpp", "lean"), ("cuda", "proxy")):
    lib = header_baseline(kind, cfg, tier)
    libc = sorted(s for s in lib if not s.startswith("_Z"))
    print(f"baseline {kind}/{tier}: {len(lib)} undefined, C names: {' '.join(libc)}")
    print(f"  objects: {len(baseline_objects(kind, cfg, tier))} undefined")
EOF2
    ;;
grade)
    make grade SUBMISSION=reference/fused.cu OUT="$LOGS/grade" PYTHON=$PY
    cp "$LOGS/grade/results.json" "$LOGS/grade_fused.json" 2>/dev/null
    stages "$LOGS/grade_fused.json" ;;
reqcost)
    $PY tools/request_cost.py ;;
spy)
    # a grade of fused.cu under py-spy (the judge and its child, idle frames too): where the
    # bench's seconds go, as collapsed stacks (fold them with tools/spy_fold.py)
    $PY -m grader grade reference/fused.cu --no-bench --quiet --json /tmp/spy-warm.json >/dev/null 2>&1
    py-spy record --subprocesses --idle --rate 200 --format raw --output "$LOGS/spy.txt" -- \
        $PY -m grader grade reference/fused.cu --quiet --json "$LOGS/spy.json" | tail -3
    stages "$LOGS/spy.json" ;;
tests)
    # one pytest per file, each under its own limit (TESTS_<file stem>, seconds), so that a hang
    # costs its file only; a test running past 150 s dumps every thread's stack (faulthandler)
    # and the processes are listed just before a file's limit
    failed=0
    declare -A TLIM=([test_third_party]=420 [test_gpu]=300 [test_batch]=560 [test_redteam]=590)
    for f in ${TESTS:-tests/test_third_party.py tests/judge/test_gpu.py tests/course/test_batch.py tests/test_redteam.py}; do
        stem=$(basename "${f%%::*}" .py); stem=${stem//[^A-Za-z0-9_]/_}; var=TESTS_$stem
        lim=${!var:-${TLIM[$stem]:-200}}; (( lim < 30 )) && lim=30
        echo "--- $f (limit $lim s)"; touch "$LOGS/start_$stem"
        # the process list just before the limit (a hang shows there); its output goes to a
        # file, not to this phase's pipe, so that it does not keep the phase open
        # and every Python thread's stack in pytest (SIGUSR1: tests/conftest.py, PYTEST_STACKS)
        ( sleep $((lim - 8)) && pkill -USR1 -f "^[^ ]*python[0-9.]* -m pytest .*$f" ; sleep 5
          ps -eo pid,ppid,stat,etimes,pcpu,wchan:24,args --forest | cut -c1-240 \
              > "$LOGS/ps_$stem.txt" ) </dev/null >/dev/null 2>&1 & W=$!
        PYTEST_STACKS="$LOGS/stacks_$stem.txt" timeout -k 5 "$lim" $PY -m pytest -v -m gpu -p no:cacheprovider -rA --durations=8 \
            -o faulthandler_timeout=$(( lim > 165 ? 150 : lim - 15 )) "$f" > "$LOGS/pytest_$stem.txt" 2>&1
        rc=$?; echo "rc $rc"; (( rc != 0 )) && failed=1
        # every submission a batch of this file finished (its verdict, seconds, finish time),
        # so that a batch stopped at the limit still shows how far it got and at what pace
        find /tmp/pytest-of-* -name batch.json -newer "$LOGS/start_$stem" 2>/dev/null | sort | while read -r b; do
            $PY -c "import json, sys; r = json.load(open(sys.argv[1])); print(r.get('finished_at'), r.get('submission'), r.get('verdict'), r.get('seconds'))" "$b"
        done | sort > "$LOGS/batch_rows_$stem.txt"
        pkill -P $W 2>/dev/null; kill $W 2>/dev/null
        grep -E "^(PASSED|FAILED|XFAIL|XPASS|ERROR|SKIPPED)|passed|failed|Timeout|^E  " "$LOGS/pytest_$stem.txt" | cut -c1-400 | tail -40
    done
    return $failed ;;
redteam)
    $PY tools/redteam.py /tmp/redteam --gpu --only "${ONLY:-}" ;;
corpus)
    $PY tools/corpus.py --kind cuda --json "$LOGS/corpus.json" ;;
bench)
    $PY tools/bench_reference.py --json "$LOGS/bench_reference.json" ;;
fidelity)
    $PY tools/fidelity.py reference/fused.cu ;;
gradetime)
    # make grade side by side with an older tree (GRADETIME_OLD, default .cache/carry/old: unpack it there
    # with `git archive REV | tar x -C .cache/carry/old` before the call): the issue's 10% bar
    # and a third arm, this tree with the timing-confidence rounds off (precision = 0): what the
    # judge's own observation costs apart from what the precision asked for costs
    sed 's/^precision = .*/precision = 0/' assignment/config.toml > /tmp/precision0.toml
    $PY tools/grade_time_ab.py --old "${GRADETIME_OLD:-.cache/carry/old}" --n "${GT_N:-2}" --arm precision0=/tmp/precision0.toml ;;
batchtime)
    # the batch side by side with an older tree (GRADETIME_OLD), on GPU 0 with the sandbox: the
    # issue's 10% bar for the batch. A class of BT_N (4) kernels (tools/batch_throughput.py's mix),
    # graded by each arm once to build, then BT_RUNS (1) pairs, this tree first in odd pairs
    # (tools/grade_time_ab.py): both arms timed warm, as make grade's A/B is. A batch of 4 with its
    # reference run is ~100 s on an H200: 4 batches fit 560 s, BT_RUNS=2 needs two calls' worth
    rm -rf /tmp/bt-class && $PY - <<'EOF3'
import sys; sys.path.insert(0, "tools")
from pathlib import Path
from batch_throughput import make_class
import os
print(dict(make_class(Path("/tmp/bt-class"), int(os.environ.get("BT_N", "4")), salt="batchtime")))
EOF3
    $PY tools/grade_time_ab.py --old "${GRADETIME_OLD:-.cache/carry/old}" --batch /tmp/bt-class --gpus 0 --n "${BT_RUNS:-1}" ;;
ab)
    # what the launch observation costs the timings after it: a warm-up grade (the builds), then
    # AB_N grades each with it on and off, alternating (tools/profiler_ab.py)
    $PY -m grader grade reference/fused.cu --no-bench --quiet --json /tmp/ab-warm.json >/dev/null 2>&1
    $PY tools/profiler_ab.py --n "${AB_N:-2}" --json "$LOGS/profiler_ab.json" ;;
compile)
    mkdir -p /tmp/edit
    for i in 1 2 3; do
        { echo '_CUDA_SRC = r"""'; cat reference/fused.cu; echo "// edit $i $(date +%s%N)"; echo '"""'; } > /tmp/edit/attention_$i.py
        $PY -m grader grade /tmp/edit/attention_$i.py --no-bench --json /tmp/edit/r$i.json --quiet | grep -E "^compile|^verdict"
        $PY -c "import json; c = json.load(open('/tmp/edit/r$i.json'))['compile']; print('edit $i: compile', c['seconds'], 's, tier', c.get('tier'), 'cached', c['cached'])"
    done ;;
noisy)
    # NOISY_ALONE=0: the grade beside the hammer alone (when device time is short)
    if [ "${NOISY_ALONE:-1}" = 1 ]; then
        $PY -m grader grade reference/fused.cu --json "$LOGS/alone.json" --quiet | grep -E "^verdict|NOISY"
    fi
    $PY - > "$LOGS/hammer.txt" 2>&1 <<'EOF' &
import torch, time
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
end = time.time() + 240
while time.time() < end:
    for _ in range(20):
        a @ a
    torch.cuda.synchronize()
EOF
    H=$!; sleep 8
    $PY -m grader grade reference/fused.cu --json "$LOGS/beside.json" --quiet | grep -E "^verdict|NOISY"
    kill $H 2>/dev/null
    $PY -c "
import json
import os
for n in ('alone', 'beside'):
    if not os.path.exists('$LOGS/' + n + '.json'):
        continue
    d = json.load(open('$LOGS/' + n + '.json'))
    q = d.get('bench_quality') or {}
    print(n, q.get('status'), q.get('reasons'))
    for p in q.get('per_size', []):
        print('  S', p['S'], 'gpu_health', p.get('gpu_health'))
    for b in d.get('bench', []):
        print('  S', b['S'], 'slowdown', round(b['slowdown'], 4), 'interval', b.get('interval'))" ;;
throughput)
    $PY tools/batch_throughput.py --n "${N:-50}" --gpus ${GPUS:-0} --jobs "${JOBS:-16}" --json "$LOGS/throughput.json" ;;
tprofile)
    make profile SUBMISSION=reference/fused.triton.py LABEL=triton_after BACKEND=triton PYTHON=$PY
    mkdir -p "$LOGS/profiles" && cp reference/profiles/triton_after* "$LOGS/profiles/" && ls -la "$LOGS/profiles"
    $PY -m grader ncu reference/profiles/triton_after_details.csv reference/profiles/triton_after_raw.csv | head -30 ;;
profile)
    # labelled by the card (references_h100, references_h200): the fixtures say which GPU they are of
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -o 'H[0-9]\+' | head -1 | tr H h)
    make profile SUBMISSION=reference/fused.cu LABEL=references_${gpu:-gpu} PYTHON=$PY
    grep -h "again without" reference/profiles/references_${gpu:-gpu}*_ncu.log
    mkdir -p "$LOGS/profiles" && cp reference/profiles/references_${gpu:-gpu}* "$LOGS/profiles/" && ls -la "$LOGS/profiles" ;;
beforeafter)
    # the demo's before/after kernels (reference/naive.cu, reference/fused_tc.cu as the student),
    # cold and warm exports labelled by the card (naive_h200, fused_tc_h200): the model reports' fixtures
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -o 'H[0-9]\+' | head -1 | tr H h)
    mkdir -p "$LOGS/profiles"
    for k in naive fused_tc; do
        make profile SUBMISSION=reference/$k.cu LABEL=${k}_${gpu:-gpu} PYTHON=$PY
        cp reference/profiles/${k}_${gpu:-gpu}* "$LOGS/profiles/"
    done
    ls -la "$LOGS/profiles" ;;
sbprof)
    # the sandboxed GPU grade's cost: a batch of one fused.cu with the sandbox off (the first
    # also builds), then on, each beside tools/thread_cpu.py (the busiest threads every 3 s).
    # 2026-11-27: bench 40 s on vs 19 s off; the thread list showed a CUDA driver thread
    # spinning a core in the sandboxed child (its socket's listen faked by the filter) and the
    # judge's OpenMP checks slowed beside it; fixed in grader/isolation/seccomp.py
    rm -rf /tmp/sbp && mkdir -p /tmp/sbp "$LOGS/sbprof"
    { echo '_CUDA_SRC = r"""'; cat reference/fused.cu; echo '"""'; } > /tmp/sbp/s000.py
    for sb in off on; do
        rm -rf /tmp/sbp-out; t0=$(date +%s)
        $PY tools/thread_cpu.py 3 200 > "$LOGS/sbprof/threads_$sb.txt" 2>&1 & W=$!
        $PY -m grader batch /tmp/sbp --out /tmp/sbp-out --gpus 0 --sandbox "$sb" --no-pdf > "$LOGS/sbprof/$sb.txt" 2>&1
        echo "sandbox $sb: $(( $(date +%s) - t0 )) s"; kill $W 2>/dev/null
        cp /tmp/sbp-out/students/s000/results.json "$LOGS/sbprof/results_$sb.json"
        $PY -c "import json, sys; d = json.load(open(sys.argv[1])); print('  stages', d.get('stage_seconds'))
for b in d.get('bench', []): print('  S', b.get('S'), 'slowdown', round(b['slowdown'], 4), 'requests', b['interval'].get('requests'), 'rounds', b['interval'].get('rounds'))" \
            "$LOGS/sbprof/results_$sb.json" 2>&1 | tail -4
        grep -v "^  pid" "$LOGS/sbprof/threads_$sb.txt" | awk '{print $1, $2, $3}' | tail -12 | tr '\n' ';'; echo
    done ;;
heldout)
    # a held-out set of kernels (HELDOUT, a folder the project does not hold: untracked, carried
    # with the tree), each graded alone without the benchmark, four at once: verdict and messages
    mkdir -p "$LOGS/heldout"
    ls "${HELDOUT:-heldout32}"/*.py | xargs -P 4 -I{} sh -c \
        '$0 -m grader grade "$1" --no-bench --json "$2/$(basename "$1" .py).json" > "$2/$(basename "$1" .py).txt" 2>&1' \
        $PY {} "$LOGS/heldout"
    for f in "$LOGS"/heldout/*.txt; do
        echo "--- $(basename "$f" .txt)"; grep -E "^(verdict|diagnosis|numerics|config [0-9]|  config)" "$f" | cut -c1-600
    done ;;
lanes)
    # why two GPU lanes gave no speedup (2026-11-28, H200 x2: the bench stage 27.78 s a submission
    # on two lanes against 10.36 s on one): a batch of N on each of LANES, beside
    # tools/thread_cpu.py (the busiest threads every 5 s), and py-spy of the batch process
    # during its bench stage (SPY_AFTER seconds in: 30 s of what runs, then 30 s of who holds the GIL)
    mkdir -p "$LOGS/lanes"; command -v py-spy || echo "no py-spy"
    for g in ${LANES:-0,1 0}; do
        tag=${g//,/_}
        $PY tools/thread_cpu.py 5 400 > "$LOGS/lanes/threads_$tag.txt" 2>&1 & W=$!
        ( sleep "${SPY_AFTER:-90}"; p=$(pgrep -f -- "-m grader batch" | head -1); [ -n "$p" ] || exit 0
          py-spy record --pid "$p" --duration 30 --rate 100 --format raw --output "$LOGS/lanes/spy_$tag.txt"
          py-spy record --pid "$p" --duration 30 --rate 100 --gil --format raw --output "$LOGS/lanes/spygil_$tag.txt"
        ) > "$LOGS/lanes/spylog_$tag.txt" 2>&1 & S=$!
        $PY tools/batch_throughput.py --n "${N:-6}" --gpus "$g" --jobs "${JOBS:-16}" --json "$LOGS/lanes/throughput_$tag.json" 2>&1 \
            | grep -v "^ *[0-9.]* s  \[" | tail -14
        kill $W 2>/dev/null; wait $S 2>/dev/null
    done ;;
demo)
    make demo OUT="$LOGS/demo" PYTHON=$PY && ls -la "$LOGS/demo" ;;
*) echo "unknown phase $1"; return 2 ;;
esac
}

if [ "${1:-}" = "--one" ]; then phase "$2"; exit $?; fi

phases=${*:-setup system grade tests}
# the whole GPU list; one device call holds at most 10 minutes. Measured on an H200 (2026-11-24,
# second session, cold machine first): setup 2 s, system 42 (it builds the audit's baselines),
# grade 72, tests: test_third_party 181 (cold: the full-tier builds), test_gpu 135, test_batch
# 376 warm, > 420 on a cold machine (21 of 23 rows at 420 s; its GPU class: 23 submissions, 8
# compiling at once, each CPU timing holding the machine);
# corpus 63 (after test_third_party: cached), redteam ONLY='^gpu_' 79, '^(?!gpu_)[a-m]' 311,
# '^(?!gpu_)[n-z]' 284 (337 cold), bench 31, fidelity 66, compile 40, noisy 38, profile 114,
# throughput 336, demo 66. On an H100 (2026-11-25, after the judge's clock, issue 26: the CPU
# class grew by nine attacks, each CPU timing paced round by round by the judge): test_gpu 195,
# redteam ONLY='^gpu_|^hidden_sys|^dispatcher' 130, '^(?!gpu_)[a-m]' past 560 (36 entries;
# rows queue for the one CPU slot), '^(?!gpu_)[a-f]' 399, '^(?!gpu_)[g-m]' 179. On an H100
# (2026-11-25, second session): '^gpu_' 104, '^(?!gpu_)[n-r]' 257, '^(?!gpu_)[s-z]' 193 ('^gpu_|'
# with n-z together ran past 540 on a cold machine), test_third_party past 240 cold (the full
# tier's baseline build under nvcc), 168 warm; test_gpu 248 (27 tests), grade 24 warm.
# (2026-11-25, third session, H100): grade 73 cold, noisy 150 (the hammer throttles the SM clock
# to 1365 MHz: every request discarded until the 10 s cap, three times a size), fidelity 175
# (5 grades, five requests a size), test_gpu 229 (25 tests). (2026-11-25, fourth session, H100,
# Triton 3.6): triton 268-373 (grades of both Triton references, the Triton class batch-graded
# on GPU 0 with the sandbox, bench_reference with the Triton references), tprofile 167 (cold and
# warm), test_triton 128 (2 GPU tests: each compiles and autotunes), test_gpu 271 (25 tests,
# with the launch observation), test_third_party 301 (7 GPU entries), redteam
# ONLY='^(gpu_|dispatcher|triton)' 196. (2026-11-25, fifth session, H100): ab 143 (AB_N=2), gradetime
# 151 (GT_N=2), test_gpu 207, redteam ONLY='^(gpu_|dispatcher)' 140-168, test_triton 70. So a session
# runs it as seven calls, back to back (a warm machine keeps the build cache; it goes back
# after 30 s idle and after 30 minutes held; about 55 minutes held in all, two machines):
#   TESTS="tests/test_third_party.py tests/judge/test_gpu.py" tools/gpu_session.sh setup system grade tests
#   TESTS="tests/course/test_batch.py" tools/gpu_session.sh setup tests corpus
#   ONLY='^gpu_' tools/gpu_session.sh setup redteam bench fidelity compile noisy
#   ONLY='^(?!gpu_)[a-f]' tools/gpu_session.sh setup redteam      (the CPU attacks graded beside
#   ONLY='^(?!gpu_)[g-m]' tools/gpu_session.sh setup redteam       the GPU, in three parts)
#   ONLY='^(?!gpu_)[n-r]' tools/gpu_session.sh setup redteam
#   ONLY='^(?!gpu_)[s-z]' tools/gpu_session.sh setup redteam
#   tools/gpu_session.sh setup throughput profile demo
#   TESTS="tests/judge/test_triton.py" tools/gpu_session.sh setup triton tprofile tests     (Triton, issue 31)
# (2026-11-27, H200, 11 minutes of device time left): setup 3, test_gpu 245 (25 tests), redteam
# ONLY='^(gpu_|dispatcher)' 103; a call cut by the budget returned nothing (the logs are packed
# after every phase now). (2026-11-27, second session, H200): test_gpu 249 (25 passed), setup 26
# with tools/sandbox_gpu_probe.py (it found CUDA's init needs bind and listen: now faked in a
# CUDA child's filter), profile 148 (cold and warm, the L2→SM metrics present), gradetime 193
# (GT_N=2), redteam ONLY='^(gpu_|dispatcher|socket)' 273 (31 held), fidelity 166, noisy 151 with
# NOISY_ALONE=0 (past 150 with the grade alone first: LIMIT_noisy=300 for both). What is left:
#   TESTS="tests/course/test_batch.py" tools/gpu_session.sh setup tests throughput
#   ONLY='^(?!gpu_)[a-m]' tools/gpu_session.sh setup redteam; then '^(?!gpu_)[n-z]'
#   tools/gpu_session.sh setup fidelity triton        (issue 29's interval with the run-to-run part)
# (2026-11-27, third session, H200, the one-chip machine counted at 50%): setup 3-4, fidelity 161-216,
# gradetime 278 (three arms, GT_N=2), heldout 142 (12 kernels, four at once; 56 for two),
# beforeafter 214, test_gpu 244 (25 tests), triton past 300 (the two Triton grades take ~190 s,
# then the batch of the Triton class: give it LIMIT_triton=480), throughput cut at 340 s with 4 of
# 50 done (100-160 s a submission: a sandboxed request is ~5x slower; a batch of one fused.cu:
# bench 38.2 s sandboxed vs 18.8 s not, check 2.6 vs 0.2 s; launch+sync in the sandbox only ~30%
# slower, so not the seccomp filter: profile the judge and the child of a sandboxed batch of one
# FIRST, e.g. py-spy dump of both during its bench). What is left:
#   TESTS="tests/course/test_batch.py" tools/gpu_session.sh setup tests throughput
#   ONLY='^(?!gpu_)[a-m]' tools/gpu_session.sh setup redteam; then '^(?!gpu_)[n-z]'
#   LIMIT_triton=480 tools/gpu_session.sh setup triton
# (2026-11-27, fourth session, H200, counted in full): setup 3-6, sbprof 177-237 (py-spy
# 475: no faster cause than tools/thread_cpu.py), redteam ONLY='^socket' 71, '^gpu_socket' 87.
# The sandboxed slowdown's cause: a CUDA driver thread spinning a core beside the faked bind and
# listen (fixed: the filter makes them, refuses connect); a batch of one fused.cu, sandbox on,
# check 2.6 -> 0.3 s, bench 40 -> 17.8 s (off: 13.3). throughput cut at 440 s with 12 of 50
# done, ~24 s a submission on the one GPU lane: the bench's confidence rounds (issue 29), not
# the sandbox, now set the pace (50 would take ~20 minutes: give it a call of its own, N=20).
# What is left:
#   TESTS="tests/course/test_batch.py" tools/gpu_session.sh setup tests
#   N=20 LIMIT_throughput=560 tools/gpu_session.sh setup throughput
#   ONLY='^(?!gpu_)[a-m]' tools/gpu_session.sh setup redteam; then '^(?!gpu_)[n-z]'
#   LIMIT_triton=480 tools/gpu_session.sh setup triton
# (2026-11-27, fifth session, H200, 67% then 50% counted): setup 8, reqcost 15, spy 114, grade 73-98
# cold, gradetime 233-241 (GT_N=2), test_gpu past 300 cold (26 passed by then), 296 warm (34 of
# 35: the naive reference's clean-SDPA ratio 1.10 at S = 64 with the references out of the later
# requests: reverted) and test_cuda_reference_is_ok_within_1e4 93 (3 passed, final code),
# redteam ONLY='^gpu_(canary|wrong)' 117, throughput N=8 211 (12.95 s a submission in steady
# state, 8 of 8 ok). py-spy (phase spy) showed a request's seconds in 48 `normal_` launches a
# pool refill, the canaries' 120 MB crossing 64 KiB pipes and `_read_exact`'s per-read buffers:
# fixed; make grade 33.9 -> 26.1 s (old tree 14.6-16.3 s). What is left:
#   tools/gpu_session.sh setup tests                 (test_gpu whole, on the final code: past 300 s cold)
#   TESTS="tests/course/test_batch.py" tools/gpu_session.sh setup tests
#   N=20 LIMIT_throughput=560 tools/gpu_session.sh setup throughput
#   ONLY='^(?!gpu_)[a-m]' tools/gpu_session.sh setup redteam; then '^(?!gpu_)[n-z]'
#   LIMIT_triton=480 tools/gpu_session.sh setup triton
# (2026-11-28, sixth session, H100, 1800 s of budget): setup 9, test_gpu 384 (32 of 35: the
# references' watched round held the harness's own input fills as ATen work: fixed, then
# test_cuda_reference_is_ok_within_1e4 94, 3 passed), redteam ONLY='^gpu_' 286 (compute_ahead_cuda
# a compile_error: the full headers; rebuilt on the proxy's, then ONLY='^gpu_compute' 175, held),
# triton 401 (LIMIT_triton=420 held: two grades, the class of 8, the speed table), a TORCH_CHECK
# with an int or a float in the proxy tier: SIGSEGV, 45-55 s a probe (fixed, not yet re-run:
# tests/submissions/gpu/check_with_numbers.py in test_gpu). What is left:
#   TESTS_test_gpu=540 LIMIT_tests=560 tools/gpu_session.sh setup tests   (test_gpu whole, final code)
#   TESTS="tests/course/test_batch.py" tools/gpu_session.sh setup tests
#   N=20 LIMIT_throughput=560 tools/gpu_session.sh setup throughput
#   ONLY='^(?!gpu_)[a-m]' tools/gpu_session.sh setup redteam; then '^(?!gpu_)[n-z]'
#   GPUS="0 0,1" on a two-GPU kind: throughput
# (2026-11-28, seventh session: no device time left, nothing run). Since then the GPU canaries are
# commit-reveal (grader/judge/gpu.py: counter-based inputs, every timed output digested, the
# checked calls drawn after the reply): FIRST on the next GPU,
#   TESTS_test_gpu=540 LIMIT_tests=560 tools/gpu_session.sh setup tests   (its new
#     test_the_gpus_counter_inputs_are_the_judges_bit_for_bit, and the references still ok)
#   ONLY='^gpu_' LIMIT_redteam=400 tools/gpu_session.sh setup redteam     (canary_aware_cuda no
#     longer open: wrong_answer beneath its python_api flag; key_ahead_cuda, new and open: answers
#     made ahead from the request's key in the warm-up round; see whether it gets through)
#   LIMIT_reqcost=300 tools/gpu_session.sh setup reqcost   (events2_kept vs events2, commit: the
#     cost of the fills, copies and digests), and gradetime beside the tree before 2026-11-28
#     (GRADETIME_OLD) for the 10% bar; then the list above.
# (2026-11-28, eighth session, H200, 1800 s): setup 6-8, grade 88 cold (fused.cu ok, 1.14x/1.20x/1.20x,
# bench 16.5 s), test_gpu 413 (34 of 38 passed; test_the_gpus_counter_inputs_are_the_judges_bit_for_bit
# passed; the references' SDPA beside/clean 1.11-1.15 at S = 64: the graph replay's host submission
# inside its events while the judge's checks took the CPU, now covered by a spin: HOST_COVER_CYCLES;
# prints_numbers.py SIGSEGV: /opt/gcc's g++ copied a static libstdc++ into every library, now linked
# to the process's shared one: process_libstdcxx), then on the fixed code the three references 77
# (3 passed), prints_numbers 17 and check_with_numbers 35 (passed), redteam ONLY='^gpu_' past 330
# (23 entries: give it 400+), '^gpu_(canary|key_ahead)' 129 (canary_aware_cuda held: cheat_suspected;
# key_ahead_cuda held: 149x at S = 64, its Expect's open= dropped). What is left:
#   ONLY='^gpu_' LIMIT_redteam=450 tools/gpu_session.sh setup redteam
#   LIMIT_reqcost=300 tools/gpu_session.sh setup reqcost; GRADETIME_OLD=... gradetime (the 10% bar)
#   TESTS_test_gpu=540 LIMIT_tests=560 tools/gpu_session.sh setup tests   (test_gpu whole, final code)
#   TESTS="tests/course/test_batch.py" tools/gpu_session.sh setup tests
#   N=20 LIMIT_throughput=560 tools/gpu_session.sh setup throughput
#   ONLY='^(?!gpu_)[a-m]' tools/gpu_session.sh setup redteam; then '^(?!gpu_)[n-z]'
#   GPUS="0 0,1" on a two-GPU kind: throughput
# (2026-11-28, ninth session, H200, 1800 s; 0319790): redteam ONLY='^gpu_' LIMIT_redteam=450 340
# (32 held, 0 failed, 0 open), gradetime GT_N=2 263 (new/old 1.029, precision0/old 1.065; medians
# 24.5 / 23.8 / 25.4 s), tests test_gpu whole 405 (38 passed), throughput N=20 on GPU 0 464 (362.4 s,
# 3.31 a minute, steady 14.07 s a submission, 18 ok + the 2 never_writes_tail wrong_answer);
# an x2 kind was refused (none lent). What is left:
#   LIMIT_batchtime=560 tools/gpu_session.sh setup batchtime   (the batch's 10% bar on a GPU)
#   TESTS="tests/course/test_batch.py" tools/gpu_session.sh setup tests
#   ONLY='^(?!gpu_)[a-m]' tools/gpu_session.sh setup redteam; then '^(?!gpu_)[n-z]'
#   GPUS="0 0,1" N=10 on a two-GPU kind: throughput
# (2026-11-28, tenth session, nvidia-h200-x2, 1800 s; a6383e9): throughput N=10 GPUS="0 0,1" 531 (one GPU:
# 194.1 s, 3.09 a minute, steady 16.39 s a submission; two GPUs: 233.8 s, 2.57 a minute, steady 16.13 s:
# 0.83x end to end, 1.02x steady; the bench stage's mean 27.78 s on two lanes against 10.36 s on one:
# the lanes slow each other on the host, both judges being threads of the batch's one Python process),
# batchtime 396 (BT_RUNS=1, 4 fused kernels: new 82.2 s, old 102.0 s, new/old 0.806), redteam
# ONLY='^(?!gpu_)[a-g]' 336 (42 held, 0 failed), '^(?!gpu_)[h-z]' cut at 455 s by the budget (49
# entries: a call of its own, LIMIT_redteam=580). What is left:
#   ONLY='^(?!gpu_)[h-m]' LIMIT_redteam=580 tools/gpu_session.sh setup redteam; then '^(?!gpu_)[n-z]'
#   N=6 GPUS="0 0,1" throughput again: its "mean bench seconds by part" line says whether the two
#     lanes' requests or the judge's checks grew (then py-spy of the batch process: the GIL?)
# (2026-11-28, eleventh session, nvidia-h200-x2, 1800 s): lanes N=6 540 on 1a1c481 (cut in its second
# arm: batch_throughput's warm-up batch ~170 s; no py-spy on the machine): two lanes' bench stage 26.06 s a
# submission, 8.31 s of it the timings kept: every size timed three times, each lane's child and the
# compiles being "other processes" busy above 0.3 cores; quality.py now counts them on CUDA only past
# all but GPU_HOST_CORES of the judge's CPUs. throughput N=6 GPUS="0,1 0" 386 on 5fc535a: two GPUs
# 109.6 s, steady 8.08 s a submission, bench 9.37 s; one GPU 145.1 s, steady 14.77 s, bench 7.93 s:
# 1.32x end to end, 1.83x steady; 1.00 timings a size, 0 noisy grades of 12; the reference runs' SDPA
# 0.01614-0.01616 ms at S = 128 on both lanes. tests test_gpu 459 (38 passed), grade 31 warm (fused.cu
# ok, 1.11-1.20x), redteam ONLY='^(?!gpu_)[h-k]' 173 (30 held, 0 failed). What is left:
#   ONLY='^(?!gpu_)[l-r]' LIMIT_redteam=580 tools/gpu_session.sh setup redteam; then '^(?!gpu_)[s-z]'
#     (with procmem_window and seal_skip: the Landlock rule and mseal on the GPU machine's kernel)
#   N=50 GPUS="0,1" LIMIT_throughput=580 tools/gpu_session.sh setup throughput
#   the rule and the seal on CUDA children (child.py: --no-proc-writes for every child; judge._restrict),
#     then TESTS_test_gpu=560 tests and ONLY='^gpu_' redteam
[ "$phases" = all ] && phases="setup system grade tests redteam corpus bench fidelity compile noisy throughput profile demo triton tprofile"
for p in $phases; do
    start=$(date +%s)
    var=LIMIT_$p; limit=${!var:-${LIMIT[$p]:-300}}
    echo; echo "=== $p ($(date +%T), limit $limit s)"
    timeout -k 10 "$limit" "$0" --one "$p" 2>&1 | tee "$LOGS/$p.txt"
    rc=${PIPESTATUS[0]}
    echo "=== $p: rc $rc, $(( $(date +%s) - start )) s" | tee -a "$LOGS/phases.txt"
    # packed after every phase: a call the device's budget cuts short still returns what ran
    tar czf "$OUT/gpu-$(echo $phases | tr ' ' '-').tar.gz" -C "$LOGS" . 2>/dev/null
done
ls -la "$OUT"
