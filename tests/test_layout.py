"""The layering contract of grader/ (issue 27): one package per stage, each package's
`__init__` (and each top-level module's docstring) says in a `May import:` line which other
units it may import, and this test holds the code's own imports (top-level and inside
functions alike) to those lines: no import that a unit did not declare, no circle among the
declarations (so the units stack), no circle among the modules. A new arrow back up the
stack fails here, in CI, and so does a declaration that drifts from the code.

The units are grader's packages (core, isolation, analysis, build, judge, evidence, score,
report, course) and its top-level modules (run, cli, __main__); the package itself and
grader/_compat.py (the old paths) are the base every unit may import.
"""
import ast
import re
import warnings
from pathlib import Path

import pytest

from conftest import REPO

GRADER = REPO / "grader"
BASE = {"grader", "_compat"}


def modules() -> dict[str, Path]:
    """grader's modules by dotted name without the "grader." prefix ("grader" for the
    package itself); the pristine template copy is data, not code of the grader."""
    out = {}
    for path in sorted(GRADER.rglob("*.py")):
        parts = path.relative_to(GRADER).with_suffix("").parts
        if parts[0] == "pristine":
            continue
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts) or "grader"
        out[name] = path
    return out


def imports(mods: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the grader modules it imports, anywhere in its code."""
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else (name.rpartition(".")[0] or "grader")
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = [] if package == "grader" else package.split(".")
                    base = base[:len(base) - node.level + 1]
                    module = ".".join(base + ([node.module] if node.module else [])) or "grader"
                elif (node.module or "").startswith("grader"):
                    module = node.module[len("grader."):] if node.module != "grader" else "grader"
                else:
                    continue
                subs = [f"{module}.{a.name}" if module != "grader" else a.name for a in node.names]
                found = [s for s in subs if s in mods]
                targets = found or ([module] if module in mods else [])
            elif isinstance(node, ast.Import):
                targets = [a.name[len("grader."):] for a in node.names if a.name.startswith("grader.")]
            graph[name] |= {t for t in targets if t in mods and t != name}
    return graph


def unit(module: str) -> str:
    """The unit a module belongs to: its package under grader/, or itself at the top."""
    return module.split(".")[0]


def declared(mods: dict[str, Path]) -> dict[str, set[str]]:
    """unit -> the units its `May import:` line names ("nothing": none)."""
    out = {}
    for name, path in mods.items():
        if "." in name or name in BASE:
            continue                                   # a unit's own docstring: its __init__ or itself
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        m = re.search(r"^May import: (.+?)\.?$", doc, re.M)
        assert m, f"{path.relative_to(REPO)}: its docstring has no 'May import:' line"
        names = m.group(1).strip()
        out[name] = set() if names.startswith("nothing") else {n.strip() for n in names.split(",")}
    return out


def unit_arrows(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    arrows: dict[str, set[str]] = {}
    for a, targets in graph.items():
        for b in targets:
            if unit(a) != unit(b) and unit(b) not in BASE:
                arrows.setdefault(unit(a), set()).add(unit(b))
    return arrows


def undeclared(graph, contract) -> list[str]:
    return [f"{a} -> {b} ({unit(a)} may import: {', '.join(sorted(contract.get(unit(a), ()))) or 'nothing'})"
            for a, targets in sorted(graph.items()) for b in sorted(targets)
            if unit(a) != unit(b) and unit(b) not in BASE and unit(a) not in BASE
            and unit(b) not in contract.get(unit(a), set())]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def test_every_unit_declares_what_it_may_import():
    mods = modules()
    contract = declared(mods)
    units = {unit(m) for m in mods} - BASE
    assert set(contract) == units
    unknown = {f"{u}: {n}" for u, names in contract.items() for n in names if n not in units}
    assert not unknown, f"'May import:' names no such unit: {sorted(unknown)}"


def test_no_import_the_unit_did_not_declare():
    bad = undeclared(imports(modules()), declared(modules()))
    assert not bad, "imports outside the unit's 'May import:' line:\n" + "\n".join(bad)


def test_the_declared_units_stack_without_a_circle():
    contract = declared(modules())
    assert cycles(contract) == []
    # and the README's order holds: every unit imports only units named before it
    order = ["core", "isolation", "analysis", "build", "judge", "evidence", "run", "score", "report", "course",
             "cli", "__main__"]
    assert set(order) == set(contract)
    upward = [f"{a} -> {b}" for a, names in contract.items() for b in names if order.index(b) >= order.index(a)]
    assert not upward, upward


def test_no_import_circles_among_the_modules():
    assert cycles(imports(modules())) == []


def test_the_checks_see_a_circle_and_an_undeclared_import():
    """The reader and the checks on a made-up graph: they can fail."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    made_up = {"build.compile": {"judge.worker", "core.config"}, "judge.worker": {"build.compile"}}
    assert undeclared(made_up, {"build": {"core"}, "judge": {"build"}}) == \
        ["build.compile -> judge.worker (build may import: core)"]
    graph = imports(modules())
    assert "core.typsttext" in graph["report.pdf"] and "core.cache" in graph["analysis.roofline"]   # lazy too
    assert "course.batch.record" in graph["course.batch.outputs"]
    assert "course.batch" not in graph["course.batch.outputs"]


def test_each_package_says_what_it_owns_in_three_lines():
    for init in sorted(GRADER.glob("*/__init__.py")):
        doc = (ast.get_docstring(ast.parse(init.read_text())) or "").split("\n\n")[0]
        assert doc.count("\n") == 2 and doc.splitlines()[-1].startswith("May import:"), init


# ---- the old flat paths: aliases of the new modules, for one release ----------------------------

def test_the_old_paths_are_the_same_modules_with_a_deprecation_warning():
    import importlib

    from grader._compat import MOVED
    for old, new in MOVED.items():
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            mod = importlib.import_module(old)
        assert mod is importlib.import_module(new), old
        assert mod.__spec__.name == new, old                # its own spec, not the alias's
    with pytest.warns(DeprecationWarning, match="grader.judge.judge.Judge"):
        from grader.judge import Judge
    from grader.judge.judge import Judge as new_judge
    assert Judge is new_judge
    with pytest.warns(DeprecationWarning):
        from grader.report import render        # the old module grader.report's function
    assert callable(render) and render.__module__ == "grader.report.pdf"
    with pytest.warns(DeprecationWarning):
        from grader.evidence import read_folder
    assert read_folder.__module__ == "grader.evidence.exports"


def test_an_old_module_entry_still_runs():
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "grader.gradescope", "--help"], cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "--root" in out.stdout, out.stderr[-2000:]


def test_nothing_of_ours_uses_an_old_path():
    """The grader, the tools and the tests import the new paths (this file's checks aside)."""
    from grader._compat import MOVED
    old = set(MOVED)
    ours = {f"grader.{m}" for m in modules()}
    found = []
    for path in [*GRADER.rglob("*.py"), *(REPO / "tools").rglob("*.py"), *(REPO / "tests").rglob("test_*.py"),
                 REPO / "tests" / "conftest.py"]:
        if path.name in ("test_layout.py", "_compat.py") or "pristine" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            hit = [n for n in names if n in old]
            if isinstance(node, ast.ImportFrom) and node.module in ("grader.judge", "grader.report", "grader.evidence"):
                # a name of the module the package replaced, not one of its submodules
                hit += [f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" not in ours]
            found += [f"{path.relative_to(REPO)}:{node.lineno}: {h}" for h in hit]
    # ... and nor do the scripts that run the grader (python -c in a shell script, a Makefile)
    import re
    said = re.compile(r"from grader import (\w+)|(?:import |-m )(grader\.[\w.]+)")
    for path in [*(REPO / "tools").rglob("*.sh"), *(REPO / "tools").rglob("*.sbatch"), REPO / "Makefile",
                 REPO / "tools" / "gradescope" / "run_autograder", REPO / ".ci" / "run"]:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            for m in said.finditer(line):
                name = f"grader.{m[1]}" if m[1] else m[2]
                if name in old:
                    found.append(f"{path.relative_to(REPO)}:{n}: {name}")
    assert not found, "\n".join(found)
