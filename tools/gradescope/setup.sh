#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder image (choose the
# Ubuntu 24.04 base image in the assignment's settings: its python3 is 3.12; the grader
# needs >= 3.11). The zip's contents are in /autograder/source.
#
# Installs: a C++ compiler, Python with its headers (the grader's binding module and every
# kernel is built against Python.h), the CPU build of torch (no CUDA: Gradescope has no
# GPU), the grader with its dependencies (editable, so it reads
# /autograder/source/assignment/), then builds the grader's binding module once, into
# /autograder/cache, so no submission pays for it.
#
# Checked for real by tools/gradescope/emulate.py (a debootstrap'd minimal root, this script,
# run_autograder on submissions in memory cgroups). Environment overrides, for that and for
# mirrors: TORCH_PIP_ARGS (what `pip install` gets for torch; default the CPU wheel index),
# AUTOGRADER_VENV (default /autograder/venv), GRADER_CACHE (default /autograder/cache).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
VENV="${AUTOGRADER_VENV:-/autograder/venv}"
CACHE="${GRADER_CACHE:-/autograder/cache}"
TORCH_PIP_ARGS="${TORCH_PIP_ARGS:-torch --index-url https://download.pytorch.org/whl/cpu}"

apt-get update -q
apt-get install -y -q --no-install-recommends g++ make python3 python3-venv python3-pip python3-dev ca-certificates
PY=python3
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then     # an older base image
    apt-get install -y -q --no-install-recommends python3.11 python3.11-venv python3.11-dev
    PY=python3.11
fi
# Python.h of the interpreter the venv is made from (python3-dev is the default python's)
"$PY" - <<'EOF'
import os, sysconfig, sys
header = os.path.join(sysconfig.get_paths()["include"], "Python.h")
sys.exit(0 if os.path.isfile(header) else f"setup.sh: {header} is missing (install python3.X-dev)")
EOF

"$PY" -m venv "$VENV"
"$VENV/bin/pip" install -q --upgrade pip
# shellcheck disable=SC2086  # TORCH_PIP_ARGS is a list of pip arguments
"$VENV/bin/pip" install -q $TORCH_PIP_ARGS
# Pin the torch just installed: the grader's dependencies ("torch>=2.4") must never pull
# another build (PyPI's torch is the multi-GB CUDA one).
"$VENV/bin/python" -c 'import torch; print("torch==" + torch.__version__)' > "$VENV/torch-pin.txt"
"$VENV/bin/pip" install -q -c "$VENV/torch-pin.txt" -e /autograder/source
# torch.utils.cpp_extension runs `ninja` from PATH: the venv's (a pip package) where the
# image has none. run_autograder puts the venv on PATH the same way (after the system's,
# so one ninja builds here and there: another one would rebuild everything).
export PATH="$PATH:$VENV/bin"
command -v ninja > /dev/null || { echo "setup.sh: no ninja on PATH after installing the grader" >&2; exit 1; }
cd /autograder/source
GRADER_CACHE="$CACHE" "$VENV/bin/python" -c "from grader.build import compile; compile.prepare()"
"$VENV/bin/python" -m grader --version
