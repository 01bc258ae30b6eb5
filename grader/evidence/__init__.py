"""evidence: what a submission hands in beside its kernel and how it is made: `make profile`
(Nsight Compute or the CPU profiler), the exports in profiles/ read with their provenance, advice.
May import: core, isolation, analysis, build, judge.

(The old module `grader.evidence` is now `grader.evidence.exports`; its names are still found
here for one release, with a DeprecationWarning.)"""
from .._compat import lazy_reexport

__getattr__ = lazy_reexport(__name__, "grader.evidence.exports")
