#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder image (choose the
# Ubuntu 24.04 base image in the assignment's settings: its python3 is 3.12; the grader
# needs >= 3.11). The zip's contents are in /autograder/source.
#
# Installs: a C++ compiler, Python, the CPU build of torch (no CUDA: Gradescope has no GPU),
# the grader with its dependencies (editable, so it reads /autograder/source/assignment/),
# then builds the grader's binding module once, into /autograder/cache, so no submission
# pays for it.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends g++ make python3 python3-venv python3-pip ca-certificates
PY=python3
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then     # an older base image
    apt-get install -y -q --no-install-recommends python3.11 python3.11-venv
    PY=python3.11
fi
"$PY" -m venv /autograder/venv
/autograder/venv/bin/pip install -q --upgrade pip
/autograder/venv/bin/pip install -q torch --index-url https://download.pytorch.org/whl/cpu
/autograder/venv/bin/pip install -q -e /autograder/source
cd /autograder/source
GRADER_CACHE=/autograder/cache /autograder/venv/bin/python -c "from grader import compile; compile.prepare()"
/autograder/venv/bin/python -m grader --version
