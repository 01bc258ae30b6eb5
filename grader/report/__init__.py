"""report: what a person reads: the terminal summary, the PDF (results JSON -> Typst), the
student's Markdown and profiles in it, the run history (before/after).
May import: core, analysis, build, evidence, score.

(The old module `grader.report` is now `grader.report.pdf`; its names are still found here for
one release, with a DeprecationWarning.)"""
from .._compat import lazy_reexport

__getattr__ = lazy_reexport(__name__, "grader.report.pdf")
