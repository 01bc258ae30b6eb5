#!/usr/bin/env bash
# Print the Python interpreter the Makefile should use, setting one up if needed.
#
# - $PYTHON, if set, is used as is.
# - Else the first of .venv/bin/python and python3 that can already import what
#   the grader needs (a GPU box with torch and no package registry uses python3).
# - Else a virtual environment .venv is created and the project installed into it
#   from pyproject.toml. torch==2.13.0 is installed first: on the course's CPU
#   machines pip takes a local CPU wheel for it; on a Linux machine without an NVIDIA
#   GPU where pip would take PyPI's CUDA build, PyTorch's CPU index instead.
# Messages go to stderr; stdout carries only the interpreter's path.
set -euo pipefail
cd "$(dirname "$0")/.."
NEEDS='import torch, ninja, pytest, matplotlib'

if [ -n "${PYTHON:-}" ]; then
    if ! "$PYTHON" -c "$NEEDS" >/dev/null 2>&1; then
        missing=$("$PYTHON" -c "$NEEDS" 2>&1 | tail -1 || true)
        echo "wrong interpreter: PYTHON=$PYTHON cannot run the grader ($missing); leave PYTHON unset and" \
             "make finds or sets up one (.venv), or point it at a Python that has torch, ninja, pytest, matplotlib" >&2
        exit 1
    fi
    echo "$PYTHON"; exit 0
fi
for py in .venv/bin/python python3; do
    if command -v "$py" >/dev/null 2>&1 && "$py" -c "$NEEDS" >/dev/null 2>&1; then
        echo "$py"; exit 0
    fi
done

echo "setting up .venv (first run only; a few minutes) ..." >&2
python3 -m venv .venv >&2
if ! .venv/bin/python -c 'import torch' >/dev/null 2>&1; then
    index=()
    # no NVIDIA GPU on Linux: PyPI's torch is the multi-GB CUDA build (nvidia-* wheels). Unless
    # pip resolves a CPU wheel by itself (a course machine's local one), take PyTorch's CPU index,
    # as the Gradescope image does
    if [ "$(uname -s)" = Linux ] && ! command -v nvidia-smi >/dev/null 2>&1 && \
            .venv/bin/python -m pip install -q --dry-run --ignore-installed --report - torch==2.13.0 2>/dev/null \
            | grep -q '"name": "nvidia-'; then
        echo "no NVIDIA GPU here: torch 2.13.0 from PyTorch's CPU index (https://download.pytorch.org/whl/cpu)" >&2
        index=(--index-url https://download.pytorch.org/whl/cpu)
    fi
    .venv/bin/python -m pip install -q ${index[@]+"${index[@]}"} torch==2.13.0 >&2
fi
.venv/bin/python -m pip install -q -e '.[test]' >&2
.venv/bin/python -c "$NEEDS" >&2 || { echo "wrong interpreter: .venv/bin/python still cannot import what the grader needs; see the pip output above" >&2; exit 1; }
echo .venv/bin/python
