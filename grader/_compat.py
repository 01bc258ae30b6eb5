"""The old flat module paths (grader.ncu, grader.gradebook, grader.batch, ...), kept for one
release as aliases of the modules' new homes in the stage packages: `import grader.ncu` gives
the very module `grader.analysis.ncu` (so a monkeypatch through either name is seen by both)
with a DeprecationWarning, and `python -m grader.gradescope` still runs. Three old modules
became packages (grader.judge, grader.report, grader.evidence): their names are found through
the package's `__getattr__` (`lazy_reexport`).
May import: nothing (it maps names; the modules load on use).
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

REMOVED_IN = "0.3"
_OWN_SPEC: dict = {}     # alias name -> the real module's spec, between create and exec

MOVED = {   # old module path -> new module path
    **{f"grader.{m}": f"grader.core.{m}" for m in
       ("config", "result", "cache", "system", "safetext", "typsttext", "sourcetext", "answers")},
    **{f"grader.{m}": f"grader.isolation.{m}" for m in ("sandbox", "seccomp", "safefs", "channel", "options")},
    **{f"grader.{m}": f"grader.analysis.{m}" for m in
       ("ai_model", "roofline", "ncu", "perf_tier", "confidence", "numerics", "diagnose")},
    **{f"grader.{m}": f"grader.build.{m}" for m in ("parse", "tiers", "compile")},
    **{f"grader.{m}": f"grader.judge.{m}" for m in
       ("check", "bench", "gpu", "quality", "integrity", "tritonaudit", "launches", "linkaudit", "child",
        "worker", "baseline", "cpusample")},
    **{f"grader.{m}": f"grader.evidence.{m}" for m in ("cpu_profile", "profile", "profile_driver", "advisor")},
    **{f"grader.{m}": f"grader.score.{m}" for m in ("gradebook", "overrides")},
    "grader.report_markdown": "grader.report.markdown", "grader.report_profiles": "grader.report.profiles",
    "grader.report_inputs": "grader.report.inputs", "grader.report_cpu": "grader.report.cpu",
    "grader.summary": "grader.report.summary", "grader.history": "grader.report.history",
    **{f"grader.{m}": f"grader.course.{m}" for m in ("gradescope", "similarity", "class_summary")},
    "grader.batch": "grader.course.batch",
    **{f"grader.batch.{m}": f"grader.course.batch.{m}" for m in
       ("devices", "discover", "outputs", "policy", "record", "schedule")},
}


def _warn(old: str, new: str) -> None:
    warnings.warn(f"{old} moved to {new} (the stage packages, issue 27); the old path goes in "
                  f"release {REMOVED_IN}", DeprecationWarning, stacklevel=3)


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`grader.ncu` -> the module object of `grader.analysis.ncu`."""

    def find_spec(self, name, path=None, target=None):
        if name not in MOVED:
            return None
        new = MOVED[name]
        return importlib.util.spec_from_loader(name, self, is_package=new == "grader.course.batch")

    def create_module(self, spec):
        new = MOVED[spec.name]
        _warn(spec.name, new)
        module = importlib.import_module(new)
        _OWN_SPEC[spec.name] = module.__spec__
        return module

    def exec_module(self, module):
        # the real module ran under its own name; importlib has just set its __spec__ to the
        # alias's: give it its own back (relative imports inside its functions read it)
        module.__spec__ = _OWN_SPEC.pop(module.__spec__.name, module.__spec__)

    # `python -m grader.gradescope`: runpy asks for the code to run as __main__
    def is_package(self, name):
        return MOVED.get(name) == "grader.course.batch"

    def get_code(self, name):
        _warn(name, MOVED[name])
        return compile(f"import runpy\nrunpy.run_module({MOVED[name]!r}, run_name='__main__', alter_sys=True)\n",
                       f"<{name}, moved to {MOVED[name]}>", "exec")

    def get_source(self, name):
        return None


def install() -> None:
    if not any(isinstance(f, _Alias) for f in sys.meta_path):
        sys.meta_path.insert(0, _Alias())   # before the path finder: a stale grader/batch/__pycache__ of
        #                                      an old checkout would be found as an empty namespace package


def lazy_reexport(package: str, module: str):
    """A package's `__getattr__` that finds the names of the module the package replaced."""
    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        mod = importlib.import_module(module)
        try:
            value = getattr(mod, name)
        except AttributeError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        _warn(f"{package}.{name}", f"{module}.{name}")
        return value
    return __getattr__
