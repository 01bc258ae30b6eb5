"""The student's written answers: the report.md sections the handout asks for, found by
their headings, and the template's prompts that are not answers. A shared leaf (imports
only the config): the report prints the answers, the gradebook scores them.
"""
from __future__ import annotations

import re

from .config import PRISTINE_DIR

SECTIONS = ("Memory-bound or compute-bound?", "Performance gap", "Effect of sequence length",
            "Impact of kernel fusion")
SECTION_KEYS = ("bound", "gap", "length", "fusion")


def split_answers(md: str | None) -> tuple[dict, dict]:
    """(front matter, {section key: markdown}) from report.md; sections found by heading text."""
    front, body = {}, md or ""
    m = re.match(r"^---\n(.*?)\n---\n?", body, re.S)
    if m:
        for line in m[1].splitlines():
            if ":" in line:
                k, v = line.split(":", 1)
                front[k.strip().lower()] = v.strip()
        body = body[m.end():]
    answers: dict = {}
    current = None
    for line in body.splitlines():
        h = re.match(r"^#{1,3}\s+(.*)$", line)
        if h:
            title = h[1].lower()
            current = next((k for k, s in zip(SECTION_KEYS, SECTIONS)
                            if s.lower().rstrip("?") in title or k in re.findall(r"[a-z]+", title)), None)
            continue
        if current:
            answers[current] = answers.get(current, "") + line + "\n"
    prompts = _template_prompts()
    return front, {k: v.strip() for k, v in answers.items() if v.strip() and _words(v) != prompts.get(k)}


def _words(text: str) -> str:
    return " ".join(text.split())


def prompt_and_answer(key: str, text: str) -> tuple[str, str]:
    """(the template's question, the student's own text) of one answered section: the leading
    paragraphs whose words are exactly the question's (a student who wrote under it and kept
    it), and the rest. ("", text) when the section does not begin with the question."""
    prompt = _template_prompts().get(key, "")
    text = text.strip()
    for gap in re.finditer(r"\n[ \t]*\n\s*", text):      # the answer as written after it: blank lines kept
        head = text[:gap.start()]
        if _words(head) == prompt:
            return head, text[gap.end():]
        if not prompt.startswith(_words(head)):
            break
    return "", text


_PROMPTS: dict = {}


PROMPTS_FILE = PRISTINE_DIR / "report.md"


def _template_prompts() -> dict:
    """{section key: its text} in the template's report.md: the questions, not answers.

    Read from the grader's own pristine copy (grader/pristine/report.md, shipped in the
    Gradescope zip), never from student_template/report.md: that is the file the handout
    tells the student to answer in, so its text is the student's answers."""
    if not _PROMPTS:
        path = PROMPTS_FILE
        text = path.read_text() if path.is_file() else ""
        body = re.sub(r"^---\n.*?\n---\n?", "", text, flags=re.S)
        current = None
        for line in body.splitlines():
            h = re.match(r"^#{1,3}\s+(.*)$", line)
            if h:
                current = next((k for k, s in zip(SECTION_KEYS, SECTIONS) if s.lower().rstrip("?") in h[1].lower()), None)
            elif current:
                _PROMPTS[current] = _PROMPTS.get(current, "") + line + "\n"
        _PROMPTS.update({k: _words(v) for k, v in _PROMPTS.items()})
        _PROMPTS.setdefault("", "")
    return _PROMPTS
