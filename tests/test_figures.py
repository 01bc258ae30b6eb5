"""No figure in the handout, the model answers or the report template is typed by hand.

Every figure those documents quote is written by `tools/handout.py` from the config, the
AI model and the fixtures (tests/test_handout.py runs its --check), or computed by
grader/report.py at render time. Here: outside the generated blocks (and code), only the
config's own values and single digits (config 2, section 6) may appear; a figure edited
inside a block is caught by the check; the figures the blocks print are the fixtures'.
"""
import re
import sys

import pytest

from grader import config

from conftest import REPO

sys.path.insert(0, str(REPO / "tools"))
import handout  # noqa: E402

TEMPLATE = REPO / "report_template" / "report.typ.j2"
# a number that is not part of a name (fp32, L2, sm80, 3xTF32) or of a formula (2·S²·D, 4·e, D/e)
NUMBER = re.compile(r"(?<![\w.·/²^⁻×+−-])\d+(?:[.,]\d+)*(?:e-?\d+)?(?![\w·²×^/])")


def _allowed() -> set[str]:
    cfg = config.load()
    shapes = cfg.configs + cfg.bench_shapes
    values = {str(v) for s in shapes for v in (s.B, s.H, s.S, s.D)}
    return values | {f"{cfg.tolerance:g}", str(cfg.seed)} | {str(d) for d in range(10)}


def _prose(text: str, style: str) -> str:
    """The text a person typed: generated blocks, code, comments and list/heading numbers removed."""
    text = handout.BLOCKS[style].sub("", text)
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    return re.sub(r"^(\s*#*\s*)\d+\.\s", r"\1", text, flags=re.M)


def stray_figures(text: str, style: str) -> list[str]:
    allowed = _allowed()
    return [n for n in NUMBER.findall(_prose(text, style)) if n not in allowed]


@pytest.mark.parametrize("doc", [handout.HANDOUT, handout.ANSWERS], ids=lambda p: p.name)
def test_no_figure_outside_the_generated_blocks(doc):
    assert stray_figures(doc.read_text(), handout.DOCS[doc]) == []


def test_the_audit_catches_a_typed_figure():
    text = handout.HANDOUT.read_text()
    assert stray_figures(text + "\nThe naive kernel reaches 10.9 FLOP/byte, about 43 TFLOP/s.\n", "html") == ["10.9", "43"]
    assert stray_figures("S = 1024, D = 64, config 2, fp32, 3xTF32, L2, 2·S²·D, D/e", "html") == []


def test_the_report_template_types_no_figure():
    """Layout only: every number the report prints comes from grader/report.py."""
    text = TEMPLATE.read_text()
    text = re.sub(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", "", text, flags=re.S)   # Jinja
    text = re.sub(r"\$[^$]*\$", "", text)                                      # math: formulas
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith(("#", "table.")))
    text = re.sub(r"#\w+\([^)]*\)", "", text)                                  # inline Typst calls
    assert [n for n in NUMBER.findall(text) if n not in {str(d) for d in range(10)}] == []


@pytest.fixture(scope="module")
def generated():
    return handout.blocks()


def test_a_figure_edited_inside_a_block_is_caught(generated):
    for doc, figure in ((handout.HANDOUT, "15.06"), (handout.ANSWERS, "193.3"), (handout.NOTES, "74.75")):
        text = doc.read_text()
        assert figure in text
        edited = text.replace(figure, "15.4", 1)
        assert handout.render(edited, generated[doc], handout.DOCS[doc]) != edited, doc.name


def test_quoted_measurements_are_the_fixtures():
    """Spot checks of what the blocks print against the raw fixture files, read here directly."""
    import csv
    import json
    rows = list(csv.reader((REPO / "tests/fixtures/ncu/references_h200_raw.csv").open()))
    hdr = rows[0]
    col = {h: i for i, h in enumerate(hdr)}
    nvtx = next(h for h in hdr if h.startswith("thread Domain"))
    def value(rng, kernel, metric):                  # noqa: E306
        (row,) = [r for r in rows[2:] if f":{rng}:" in r[col[nvtx]] and kernel in r[col["Kernel Name"]]]
        return float(row[col[metric]].replace(",", ""))
    naive_us = sum(value("naive_S1024", k, "gpu__time_duration.sum") for k in
                   ("scores_kernel", "softmax_rows_kernel", "weighted_sum_kernel")) / 1e3
    answers, readme = handout.ANSWERS.read_text(), handout.HANDOUT.read_text()
    assert f"three kernels {naive_us:.1f} µs together" in answers
    softmax_read = value("naive_S1024", "softmax_rows_kernel", "dram__bytes_read.sum")
    assert f"and {softmax_read / 1e6:.2f} MB at S = 1024" in readme
    cpu = max(json.loads((REPO / "tests/fixtures/results/cpu_fused.json").read_text())["bench"], key=lambda r: r["S"])
    assert f"{cpu['naive_ms'] / cpu['fused_ms']:.2f}x faster than naive" in answers
