"""judge: one submission checked and timed: the judge (this process: inputs, truth, verdicts,
clock) and its sandboxed child (the worker), the checks, the benchmark, the audits of what ran.
May import: core, isolation, analysis, build.

(The old module `grader.judge` is now `grader.judge.judge`; its names are still found here for
one release, with a DeprecationWarning.)"""
from .._compat import lazy_reexport

__getattr__ = lazy_reexport(__name__, "grader.judge.judge")
