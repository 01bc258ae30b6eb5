"""Stage 1, parse: read `_CPP_SRC` / `_CUDA_SRC` / `_TRITON_SRC` out of a submission without running it.

The student's Python file is parsed with `ast` and never imported or executed, so
nothing written in Python can touch the timer or the checker. Accepted forms of a
source are a plain string literal, an r-string, and implicit concatenation of
literals (`"a" "b"`). Each line of an extracted source remembers the line of the
`.py` file it came from, so compiler errors can point at the student's file.

A submission is a `.py` file, or a folder holding one `.py` file (plus an optional
`report.md` and `profiles/`). As an extension, a bare `.cpp` / `.cu` file is graded
as `_CPP_SRC` / `_CUDA_SRC`, and a bare `.triton.py` file (Python with `@triton.jit`
kernels and `attention`) as `_TRITON_SRC`: that is how the reference kernels are graded.
A `_TRITON_SRC` is Python source too, but it is only ever parsed here and audited
(grader/judge/tritonaudit.py); it runs in the sandboxed child alone.
"""
from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass
from pathlib import Path

from ..core.config import PRISTINE_DIR

SOURCE_NAMES = {"_CPP_SRC": "cpp", "_CUDA_SRC": "cuda", "_TRITON_SRC": "triton"}
VARIABLE = {kind: name for name, kind in SOURCE_NAMES.items()}
TRITON_SUFFIX = ".triton.py"
EXPECTED_FORM = ('a module-level assignment of a string literal, e.g. _CPP_SRC = r"""...""" '
                 '(plain, raw and implicitly concatenated literals are accepted; '
                 'f-strings, variables, calls and "+" are not)')


@dataclass(frozen=True)
class Source:
    """One kernel source and where its lines live in the submission file."""
    kind: str                    # "cpp", "cuda" or "triton"
    text: str
    file: str                    # the submission file's name, as the student knows it
    line_map: tuple[int, ...]    # line_map[i] = file line of source line i (0-based)

    @property
    def digest(self) -> str:
        """A short hash of the source's code, its comments and layout apart (`code_digest`):
        what `make profile` records in its exports (grader/evidence/exports.py: whose kernels a
        profile is of), so a comment added after profiling leaves the exports this kernel's."""
        return code_digest(self.text, self.kind)

    def file_text(self) -> str:
        """The source as a file of its own whose lines are where the submission file has them
        (blank lines first), so tracebacks and Triton's errors name the student's lines;
        as it is when the literal's lines are not consecutive in the file."""
        contiguous = all(b == a + 1 for a, b in zip(self.line_map, self.line_map[1:]))
        first = self.line_map[0] if self.line_map and contiguous else 1
        return "\n" * (first - 1) + self.text

    def file_line(self, source_line: int) -> int:
        """File line (1-based) of 1-based `source_line`; past the end maps to the last line."""
        if not self.line_map:
            return 1
        return self.line_map[min(max(source_line, 1), len(self.line_map)) - 1]


def source_digest(text: str) -> str:
    """12 hex digits of the SHA-256 of a kernel source's text (what exports recorded before
    `code_digest`)."""
    import hashlib
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def code_digest(text: str, kind: str) -> str:
    """12 hex digits of the SHA-256 of a source's code: comments dropped and whitespace runs
    made one space (C++/CUDA), or comments and blank lines dropped (Triton's Python, whose
    indentation is code). Any edit of the code changes it; a comment or a reformat does not."""
    from ..core.sourcetext import strip_comments
    if kind == "triton":
        code = _python_code(text)
    else:
        code = " ".join(strip_comments(text, strings_too=False).split())
    return source_digest(code)


def _python_code(text: str) -> str:
    """Python source without comments, trailing spaces or blank lines (the text itself where
    it does not tokenize)."""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type != tokenize.COMMENT]
        text = tokenize.untokenize(tokens)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return "\n".join(line.rstrip() for line in text.splitlines() if line.strip())


@dataclass(frozen=True)
class Submission:
    """What the parse stage found. `error` is set (and sources empty) when it is invalid."""
    path: str                    # the file or folder that was handed in
    name: str                    # student id: folder or file stem
    file: str | None             # the .py (or .cpp/.cu) file that holds the sources
    sources: dict                # kind -> Source
    report_md: str | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def _invalid(path: Path, name: str, file: str | None, message: str) -> Submission:
    return Submission(path=str(path), name=name, file=file, sources={}, error=message)


def _string_tokens(text: str, node: ast.AST) -> list[tokenize.TokenInfo]:
    """The STRING tokens that make up the literal `node` spans."""
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    found = []
    for tok in tokens:
        if tok.start[0] > node.end_lineno:
            break
        if tok.type != tokenize.STRING:
            continue
        if (tok.start >= (node.lineno, node.col_offset)
                and tok.end <= (node.end_lineno, node.end_col_offset)):
            found.append(tok)
    return found


def _line_map(text: str, node: ast.Constant) -> tuple[int, ...]:
    """Map every line of the literal's value to the file line it was written on."""
    lines: list[int] = []
    for tok in _string_tokens(text, node):
        value = ast.literal_eval(tok.string)
        n_value_lines = value.count("\n")
        n_file_lines = tok.end[0] - tok.start[0]
        # A triple-quoted literal whose newlines are real newlines maps line by line;
        # a literal with "\n" escapes sits on fewer file lines: map it to its first.
        for i in range(n_value_lines + 1):
            row = tok.start[0] + i if n_value_lines == n_file_lines else tok.start[0]
            if i == 0 and lines:
                continue  # this piece continues the previous piece's last line
            lines.append(row)
    return tuple(lines)


def parse_python(text: str, path: Path, name: str) -> Submission:
    """Extract the sources from the text of a submission's `.py` file."""
    fname = path.name
    try:
        tree = ast.parse(text, filename=fname)
    except SyntaxError as e:
        return _invalid(path, name, fname, f"{fname}:{e.lineno}: Python syntax error: {e.msg}. "
                        "Fix it so the file parses (python -m py_compile " f"{fname}).")
    sources: dict[str, Source] = {}
    for stmt in tree.body:
        targets: list[ast.expr] = []
        if isinstance(stmt, ast.Assign):
            targets, value = stmt.targets, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            targets, value = [stmt.target], stmt.value
        for target in targets:
            if not (isinstance(target, ast.Name) and target.id in SOURCE_NAMES):
                continue
            if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
                return _invalid(path, name, fname, f"{fname}:{stmt.lineno}: {target.id} must be "
                                f"{EXPECTED_FORM}.")
            kind = SOURCE_NAMES[target.id]
            if kind in sources:
                return _invalid(path, name, fname, f"{fname}:{stmt.lineno}: {target.id} is "
                                "assigned twice; keep exactly one assignment.")
            sources[kind] = Source(kind=kind, text=value.value, file=fname,
                                   line_map=_line_map(text, value))
    if not sources:
        return _invalid(path, name, fname, f"{fname}: no _CPP_SRC or _CUDA_SRC found (nor _TRITON_SRC); "
                        f"the kernel source must be {EXPECTED_FORM}.")
    for kind, src in sources.items():
        if not src.text.strip():
            return _invalid(path, name, fname, f"{fname}: {VARIABLE[kind]} is empty.")
    return Submission(path=str(path), name=name, file=fname, sources=sources)


def _parse_kernel_file(path: Path, name: str) -> Submission:
    kind = "cuda" if path.suffix == ".cu" else "triton" if path.name.endswith(TRITON_SUFFIX) else "cpp"
    text = path.read_text()
    n_lines = text.count("\n") + 1
    src = Source(kind=kind, text=text, file=path.name, line_map=tuple(range(1, n_lines + 1)))
    return Submission(path=str(path), name=name, file=path.name, sources={kind: src})


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return None


def parse(path: Path | str) -> Submission:
    """Parse a submission: a `.py` file, a folder holding one, or a `.cpp`/`.cu` file."""
    path = Path(path)
    if not path.exists():
        return _invalid(path, path.stem, None, f"{path}: no such file or folder.")
    if path.is_dir():
        name = path.name
        candidates = sorted(p for p in path.glob("*.py") if not p.name.startswith("."))
        preferred = [p for p in candidates if p.name == "attention.py"]
        if preferred:
            candidates = preferred
        if len(candidates) != 1:
            found = ", ".join(p.name for p in candidates) or "none"
            return _invalid(path, name, None, f"{path}: expected one .py file holding the kernel "
                            f"(name it attention.py); found {found}.")
        report = path / "report.md"
        sub = parse_file(candidates[0], name)
        report_md = _read_text(report) if report.is_file() else None
        return Submission(**{**sub.__dict__, "path": str(path), "report_md": report_md})
    return parse_file(path, path.stem)


def parse_file(path: Path, name: str) -> Submission:
    if path.suffix in (".cpp", ".cu") or path.name.endswith(TRITON_SUFFIX):
        return _parse_kernel_file(path, name.removesuffix(".triton"))
    if path.suffix != ".py":
        return _invalid(path, name, path.name, f"{path.name}: a submission is a .py file "
                        "holding _CPP_SRC, _CUDA_SRC and/or _TRITON_SRC (see student_template/attention.py).")
    text = _read_text(path)
    if text is None:
        return _invalid(path, name, path.name, f"{path.name}: cannot be read as UTF-8 text.")
    return parse_python(text, path, name)


def profiles_dir(submission: Path) -> Path:
    """`profiles/` inside a submission folder, or beside a submission file."""
    submission = Path(submission)
    return (submission if submission.is_dir() else submission.parent) / "profiles"


PRISTINE_TEMPLATE = PRISTINE_DIR / "attention.py"


def is_template_stub(sub: Submission, kind: str) -> bool:
    """Whether the submission's source of this kind is the template's own (the handout's
    stub, unchanged but for whitespace): compared with the grader's pristine copy, never
    with student_template/, which is the file the student edits."""
    src = sub.sources.get(kind)
    if src is None:
        return False
    try:
        template = parse(PRISTINE_TEMPLATE).sources.get(kind)
    except Exception:  # noqa: BLE001 - no pristine copy: nothing is a stub
        return False
    return template is not None and " ".join(src.text.split()) == " ".join(template.text.split())
