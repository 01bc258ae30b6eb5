"""The layering contract of grader/ (issue 27): every module sits in one layer, a module
imports only from its own layer or the ones below, and no imports go round in a circle.
Read from the code's own imports (top-level and inside functions alike), so a new arrow
back up the stack fails here, in CI.

Bottom to top:
- leaves: the config, the result types, cache paths, text escaping; import nothing above;
- models: pure computations of figures (the AI model, rooflines, ncu's CSVs, tiers of
  performance, the interval, numerics, diagnoses);
- build: the submission parsed and compiled (header tiers, the cache);
- isolation: the sandbox and the options that configure it;
- judge: checking and timing the kernel in its child, the integrity scan and the link audit;
- evidence: the profilers and the exports in profiles/;
- pipeline: `grade()`, which runs the judge and gathers the evidence into a GradeResult;
- scoring: the rubric applied (gradebook, overrides);
- report: the terminal summary and the PDF;
- course: a class graded (batch), Gradescope, similarity;
- cli: the command line.
"""
import ast
from pathlib import Path

from conftest import REPO

GRADER = REPO / "grader"
LAYERS = [
    ("leaves", {"grader", "config", "result", "safetext", "sourcetext", "typsttext", "answers", "cache", "system",
                "safefs", "channel", "seccomp"}),
    ("models", {"ai_model", "roofline", "ncu", "perf_tier", "confidence", "numerics", "diagnose"}),
    ("build", {"parse", "tiers", "compile"}),
    ("isolation", {"sandbox", "options"}),
    ("judge", {"check", "bench", "gpu", "quality", "integrity", "tritonaudit", "launches", "linkaudit", "child", "worker",
               "baseline", "cpusample", "judge"}),
    ("evidence", {"evidence", "cpu_profile", "profile", "profile_driver", "advisor"}),
    ("pipeline", {"run"}),
    ("scoring", {"gradebook", "overrides"}),
    ("report", {"report", "report_markdown", "report_profiles", "report_inputs", "report_cpu", "summary", "history"}),
    ("course", {"batch", "batch.devices", "batch.discover", "batch.outputs", "batch.policy", "batch.record",
                "batch.schedule", "gradescope", "similarity", "class_summary"}),
    ("cli", {"cli", "__main__"}),
]


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


def layer_of() -> dict[str, int]:
    return {m: i for i, (_, members) in enumerate(LAYERS) for m in members}


def test_every_module_has_a_layer():
    placed = layer_of()
    missing = sorted(set(modules()) - set(placed))
    assert not missing, f"place these modules in a layer of tests/test_layout.py: {missing}"
    assert not sorted(set(placed) - set(modules())), "the contract names modules that are gone"


def test_no_import_runs_back_up_the_stack():
    placed, names = layer_of(), [n for n, _ in LAYERS]
    upward = [f"{a} ({names[placed[a]]}) -> {b} ({names[placed[b]]})"
              for a, targets in imports(modules()).items() for b in sorted(targets)
              if a in placed and b in placed and placed[b] > placed[a]]
    assert not upward, "imports back up the stack:\n" + "\n".join(upward)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
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
    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_circles():
    assert cycles(imports(modules())) == []


def test_the_checks_see_a_circle_and_an_upward_import():
    """The reader and the checks on a made-up graph: they can fail."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    graph = imports(modules())
    assert "typsttext" in graph["report"] and "cache" in graph["roofline"]       # top-level and lazy imports
    assert "batch.record" in graph["batch.outputs"] and "batch" not in graph["batch.outputs"]
    placed = layer_of()
    assert placed["judge"] > placed["compile"] and placed["run"] > placed["judge"]
