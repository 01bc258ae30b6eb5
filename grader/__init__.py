"""Grader for the attention assignment: parse -> compile -> check -> bench -> result.

One package per stage, bottom to top; each package's `__init__` says what it owns and what it
may import, and tests/test_layout.py holds every import to that (no arrow back up, no circle):
    core        the config, result types, cache paths, text escaping, the written answers
    isolation   the sandbox, its seccomp filter, the pipe to the child, safe file reading
    analysis    pure figures: the AI model, rooflines, ncu's CSVs, tiers, intervals, diagnoses
    build       the submission parsed and compiled (header tiers, preludes, the binding module)
    judge       one submission checked and timed: the judge and its sandboxed child
    evidence    `make profile` and the exports in profiles/
    run.py      `grade()`: the judge and the evidence gathered into a GradeResult
    score       the rubric applied: the gradebook, overrides
    report      the terminal summary and the PDF
    course      a class: the batch, Gradescope, similarity, the class summary
    cli.py      the command line (`python -m grader`)
The old flat module paths (grader.ncu, grader.gradebook, ...) still import for one release
(grader/_compat.py)."""
__version__ = "0.1.0"      # pyproject.toml reads it from here

from ._compat import install as _install_old_paths

_install_old_paths()
