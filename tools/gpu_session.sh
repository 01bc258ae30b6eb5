#!/usr/bin/env bash
# Everything the GPU machine must show, in one call; logs go to $OUT (or /tmp/gpu-out).
#   tools/gpu_session.sh [phase ...]   phases: setup system grade compile tests bench fidelity profile
#                                      demo batch throughput
# (default: system grade compile tests bench fidelity). `setup` installs what was carried
# in .cache/carry (typst/pypdf wheels, a bubblewrap binary): the GPU image has neither. Each phase prints a header; a failing phase does not stop the others.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
PY=$(tools/python.sh)
phases=${*:-system grade compile tests bench fidelity}
step() { echo; echo "=== $* ($(date +%T))"; }

if [ -z "${GRADER_BWRAP:-}" ] && ! command -v bwrap >/dev/null && [ -x .cache/carry/bwrap ]; then
    export GRADER_BWRAP=$PWD/.cache/carry/bwrap
fi

for phase in $phases; do case $phase in
setup)
    step "setup: carried wheels and bubblewrap"
    python3 -V
    ls .cache/carry/*.whl 2>/dev/null && $PY -m pip install -q --no-deps --no-index .cache/carry/typst-*.whl .cache/carry/pypdf-*.whl 2>&1 | tail -2
    $PY -c "import typst, pypdf; print('typst', typst.__version__ if hasattr(typst, '__version__') else 'ok', 'pypdf', pypdf.__version__)"
    $PY -c "from grader.sandbox import bwrap_path; print('bwrap:', bwrap_path())" ;;
batch)
    step "batch: the fixture class (CPU and CUDA submissions) with --gpus 0"
    $PY -m pytest -q -p no:cacheprovider -m gpu tests/test_batch.py 2>&1 | tee "$OUT/pytest_batch_gpu.txt" | tail -30 ;;
throughput)
    step "batch throughput: ${N:-50} submissions on GPU 0, then on GPUs 0,1"
    $PY tools/batch_throughput.py --n "${N:-50}" --gpus ${GPUS:-0 0,1} --jobs "${JOBS:-16}" --json "$OUT/throughput.json" 2>&1 | tee "$OUT/throughput.txt" ;;
system)
    step system
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
    $PY -c "import torch, triton; p = torch.cuda.get_device_properties(0); print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, p.name, p.multi_processor_count, 'SMs')"
    nproc ;;
grade)
    step "grade the reference fused kernel as a submission (cold cache: binding module + kernel + references)"
    make grade SUBMISSION=reference/fused.cu OUT="$OUT" 2>&1 | tee "$OUT/grade_fused.txt" ;;
compile)
    step "compile time of a changed _CUDA_SRC (after the shared parts are built)"
    mkdir -p /tmp/edit
    for i in 1 2 3; do
        { echo '_CUDA_SRC = r"""'; cat reference/fused.cu; echo "// edit $i $(date +%s%N)"; echo '"""'; } > /tmp/edit/attention_$i.py
        $PY -m grader grade /tmp/edit/attention_$i.py --no-bench --quiet | grep -E "^compile|^verdict"
    done
    step "nvcc phases for reference/fused.cu with the proxy <torch/extension.h> (the first tier), then the lean one"
    $PY -c "from grader.parse import parse; from grader.compile import annotate; from pathlib import Path; Path('/tmp/edit/f.cu').write_text(annotate(parse(Path('reference/fused.cu')).sources['cuda']))"
    nvcc -c /tmp/edit/f.cu -o /dev/null -std=c++20 -Igrader/prelude_cuda -Igrader/proxy_abi -O3 -lineinfo -arch=sm_90 -Xcompiler -fPIC --time /tmp/edit/nvtime_proxy.csv && awk -F, 'NR>1 {printf "%-24s %8.0f ms\n", $2, $(NF-1)}' /tmp/edit/nvtime_proxy.csv
    step "nvcc phases for a .cu including the grader's lean <torch/extension.h>"
    T=$($PY -c "import torch.utils.cpp_extension as c; print(' '.join('-isystem ' + p for p in c.include_paths(device_type='cuda')))" 2>/dev/null || $PY -c "import torch.utils.cpp_extension as c; print(' '.join('-isystem ' + p for p in c.include_paths(True)))")
    printf '#include <torch/extension.h>\n__global__ void k(float* x) { x[0] = 1; }\n' > /tmp/edit/t.cu
    nvcc -c /tmp/edit/t.cu -o /dev/null -std=c++20 -Igrader/prelude $T -isystem $($PY -c "import sysconfig; print(sysconfig.get_paths()['include'])") -O3 -arch=sm_90 -Xcompiler -fPIC --time /tmp/edit/nvtime.csv && awk -F, 'NR>1 {printf "%-24s %8.0f ms\n", $2, $(NF-1)}' /tmp/edit/nvtime.csv ;;
tests)
    step "pytest -m gpu"
    $PY -m pytest -q -m gpu -p no:cacheprovider 2>&1 | tee "$OUT/pytest_gpu.txt" | tail -30 ;;
bench)
    step "make bench-reference"
    $PY tools/bench_reference.py --json "$OUT/bench_reference.json" 2>&1 | tee "$OUT/bench_reference.txt" ;;
fidelity)
    step "timing fidelity: 5 grades of reference/fused.cu"
    $PY tools/fidelity.py reference/fused.cu 2>&1 | tee "$OUT/fidelity.txt" ;;
profile)
    step "Nsight Compute on the references (make profile; the fused reference is the student)"
    make profile SUBMISSION=reference/fused.cu LABEL=references_h200 2>&1 | tail -40 | tee "$OUT/profile.txt"
    cp reference/profiles/references_h200_raw.csv reference/profiles/references_h200_details.csv "$OUT/"
    step "tensor-pipe metrics and warp stalls of every kernel (the FP32 counters miss the mma FLOPs)"
    ncu --clock-control none --nvtx --nvtx-include profile/ --section WarpStateStats \
        --metrics gpu__time_duration.sum,sm__inst_executed_pipe_tensor_op_hmma.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active \
        --csv --print-units base $PY -m grader.profile_driver reference/fused.cu > "$OUT/tensor_metrics.csv" 2> "$OUT/tensor_metrics.err"
    tail -3 "$OUT/tensor_metrics.err"; wc -l "$OUT/tensor_metrics.csv" ;;
demo)
    step "make demo"
    make demo OUT="$OUT" 2>&1 | tee "$OUT/demo.txt" ;;
*) echo "unknown phase $phase" ;;
esac; done
