"""`python -m grader`: the command line (grader/cli.py), or a one-line message on a wrong interpreter.
May import: cli.
"""
import sys

try:
    from .cli import main
except ImportError as e:        # a Python without the grader's dependencies (or older than 3.11)
    sys.exit(f"wrong interpreter: {sys.executable} (Python {sys.version.split()[0]}) cannot load the grader ({e}); "
             "run it through make (make grade, make report, ...) or with $(tools/python.sh) -m grader ...")

sys.exit(main())
