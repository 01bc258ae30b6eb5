"""A student's Markdown (report.md) -> Typst markup, for the report's written answers.

markdown-it-py parses (CommonMark plus GFM tables and strikethrough, raw HTML and
images off, `$...$` / `$$...$$` math by the small rules below); the syntax tree is
rendered to Typst with everything the student wrote escaped: text through `esc`,
code as `raw("...")` string literals, links only for http(s), math through a whitelist
translation of the usual LaTeX (`\\frac`, `\\sqrt`, `^`, `_`, Greek letters, relations;
multi-letter names as upright text). Math that uses anything else is shown as code, so
no input can reach Typst's scripting (`#`), the file system, or break the document.
"""
from __future__ import annotations

import re

from ..core.typsttext import T, esc, lit

LANG = re.compile(r"^[A-Za-z0-9_+-]{1,20}$")


def parser():
    from markdown_it import MarkdownIt
    md = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"]).disable("image")
    md.inline.ruler.before("escape", "math_inline", _math_inline)
    md.block.ruler.before("fence", "math_block", _math_block, {"alt": ["paragraph", "reference", "blockquote", "list"]})
    return md


def markdown_to_typst(md: str) -> T:
    """Typst markup for a student's Markdown answer (trusted: built from escaped pieces)."""
    from markdown_it.tree import SyntaxTreeNode
    return T(_blocks(SyntaxTreeNode(parser().parse(md or ""))).strip())


# ---- math in Markdown: $inline$, $$display$$ -----------------------------------------------

def _math_inline(state, silent: bool) -> bool:
    src, start = state.src, state.pos
    if src[start] != "$" or (start > 0 and src[start - 1] == "\\"):
        return False
    display = src.startswith("$$", start)
    mark = "$$" if display else "$"
    end = src.find(mark, start + len(mark))
    while end != -1 and src[end - 1] == "\\":
        end = src.find(mark, end + 1)
    body = src[start + len(mark):end] if end != -1 else ""
    if end == -1 or not body.strip() or (not display and (body[0].isspace() or body[-1].isspace())):
        return False
    if not silent:
        token = state.push("math_inline", "math", 0)
        token.content, token.markup = body, mark
    state.pos = end + len(mark)
    return True


def _math_block(state, start_line: int, end_line: int, silent: bool) -> bool:
    begin = state.bMarks[start_line] + state.tShift[start_line]
    first = state.src[begin:state.eMarks[start_line]]
    if not first.startswith("$$"):
        return False
    rest = first[2:]
    if rest.rstrip().endswith("$$") and rest.strip() != "":      # $$ ... $$ on one line
        body, line = rest.rstrip()[:-2], start_line
    else:
        lines, line = [rest], start_line + 1
        while line < end_line:
            text = state.src[state.bMarks[line] + state.tShift[line]:state.eMarks[line]]
            if text.rstrip().endswith("$$"):
                lines.append(text.rstrip()[:-2])
                break
            lines.append(text)
            line += 1
        else:
            return False
        body = "\n".join(lines)
    if silent:
        return True
    token = state.push("math_block", "math", 0)
    token.content, token.block, token.map = body, True, [start_line, line + 1]
    state.line = line + 1
    return True


# ---- LaTeX math -> Typst math (a whitelist) ----------------------------------------------

SYMBOLS = {
    **{g: g for g in ("alpha", "beta", "gamma", "delta", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu",
                      "nu", "xi", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega", "ell",
                      "Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Upsilon", "Phi", "Psi", "Omega",
                      "infinity", "partial", "nabla", "sum", "product", "integral", "max", "min", "exp", "log", "ln",
                      "sin", "cos", "tan", "lim", "sup", "inf", "times", "approx", "quad", "in", "prop")},
    "epsilon": "epsilon.alt", "varepsilon": "epsilon", "vartheta": "theta.alt", "varphi": "phi",
    "infty": "infinity", "prod": "product", "int": "integral", "cdot": "dot.op", "ast": "ast",
    "le": "lt.eq", "leq": "lt.eq", "ge": "gt.eq", "geq": "gt.eq", "ne": "eq.not", "neq": "eq.not", "ll": "lt.double",
    "gg": "gt.double", "equiv": "equiv", "sim": "tilde.op", "simeq": "tilde.eq", "propto": "prop",
    "to": "arrow.r", "rightarrow": "arrow.r", "leftarrow": "arrow.l", "Rightarrow": "arrow.r.double",
    "Leftarrow": "arrow.l.double", "mapsto": "arrow.r.bar", "uparrow": "arrow.t", "downarrow": "arrow.b",
    "pm": "plus.minus", "mp": "minus.plus", "div": "div", "circ": "circle.stroked.tiny", "star": "star",
    "ldots": "dots.h", "dots": "dots.h", "cdots": "dots.c", "vdots": "dots.v", "qquad": "wide",
    "lfloor": "floor.l", "rfloor": "floor.r", "lceil": "ceil.l", "rceil": "ceil.r", "log_2": "log",
    "mid": "divides", "cap": "sect", "cup": "union", "subset": "subset", "forall": "forall", "exists": "exists",
    "langle": "angle.l", "rangle": "angle.r", "prime": "prime", "top": "top",
}
SPACES = {",": "thin", ";": "med", ":": "med", " ": "space", "!": ""}
CHARS = {"+": "+", "-": "-", "=": "=", "(": "(", ")": ")", "[": "bracket.l", "]": "bracket.r", "|": "bar.v",
         ",": ",", ".": ".", "!": "!", "'": "'", ":": "colon", "<": "lt", ">": "gt", "/": "slash", "*": "ast",
         "~": "space", ";": "semi", "?": "?"}
FUNCTIONS = {"frac": ("frac", 2), "dfrac": ("frac", 2), "tfrac": ("frac", 2), "sqrt": ("sqrt", 1),
             "mathbf": ("bold", 1), "boldsymbol": ("bold", 1), "mathit": ("italic", 1), "hat": ("hat", 1),
             "bar": ("overline", 1), "overline": ("overline", 1), "tilde": ("tilde", 1), "vec": ("arrow", 1),
             "underline": ("underline", 1)}
TEXT = ("text", "mathrm", "textrm", "operatorname", "textit", "textbf", "mathsf", "texttt", "mbox")
TOKEN = re.compile(r"\\[A-Za-z]+|\\.|[A-Za-z]+|\d+(?:\.\d+)?|\s+|.", re.S)


class _Unsupported(Exception):
    pass


def tex_to_typst(tex: str) -> str | None:
    """Typst math for a LaTeX formula, or None when it uses something outside the whitelist."""
    tokens = TOKEN.findall(tex)
    try:
        out, rest = _sequence(tokens, 0, end=None)
    except (_Unsupported, IndexError, ValueError):
        return None
    return out if rest == len(tokens) and out.strip() else None


def _string(text: str) -> str:
    return '"' + re.sub(r"[\x00-\x1f]", " ", text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _skip(tokens: list, i: int) -> int:
    while i < len(tokens) and tokens[i].isspace():
        i += 1
    return i


def _group(tokens: list, i: int) -> tuple[str, int]:
    """One argument: {...} or a single token; returns (typst, next index)."""
    i = _skip(tokens, i)
    if tokens[i] == "{":
        return _sequence(tokens, i + 1, end="}")
    return _atom(tokens, i)


def _sequence(tokens: list, i: int, end: str | None) -> tuple[str, int]:
    parts: list[str] = []
    while (i := _skip(tokens, i)) < len(tokens):
        t = tokens[i]
        if t == end:
            return " ".join(p for p in parts if p), i + 1
        if t in ("^", "_"):
            arg, i = _group(tokens, i + 1)
            base = parts.pop() if parts else ""
            parts.append(f"{base or chr(34) * 2}{t}({arg})")
            continue
        atom, i = _atom(tokens, i)
        parts.append(atom)
    if end is not None:
        raise _Unsupported("unclosed group")
    return " ".join(p for p in parts if p), i


def _argument(typst: str) -> str:
    """A function argument: a comma outside parentheses would split it in two."""
    depth = 0
    for piece in re.split(r'"(?:[^"\\]|\\.)*"', typst):     # string literals left out
        for ch in piece:
            depth += ch == "("
            depth -= ch == ")"
            if ch == "," and depth == 0:
                raise _Unsupported("comma in an argument")
    return typst or chr(34) * 2


def _atom(tokens: list, i: int) -> tuple[str, int]:
    t = tokens[i]
    if t == "{":
        return _sequence(tokens, i + 1, end="}")
    if t.startswith("\\"):
        name = t[1:]
        if name in SPACES:
            return SPACES[name], i + 1
        if name in ("left", "right", "big", "Big", "bigg", "Bigg", "displaystyle", "limits"):
            return "", i + 1
        if name in ("{", "}"):
            return ("brace.l" if name == "{" else "brace.r"), i + 1
        if name in ("%", "_", "&", "#", "$"):
            return _string(name), i + 1
        if name in TEXT:
            j = _skip(tokens, i + 1)
            if tokens[j] != "{":
                raise _Unsupported(name)
            k = tokens.index("}", j)
            return _string("".join(tokens[j + 1:k])), k + 1
        if name == "sqrt" and tokens[_skip(tokens, i + 1)] == "[":
            j = _skip(tokens, i + 1)
            k = tokens.index("]", j)
            index, _ = _sequence(tokens[j + 1:k] + ["}"], 0, end="}")
            arg, k = _group(tokens, k + 1)
            return f"root({_argument(index)}, {_argument(arg)})", k
        if name in FUNCTIONS:
            func, n = FUNCTIONS[name]
            args, j = [], i + 1
            for _ in range(n):
                arg, j = _group(tokens, j)
                args.append(_argument(arg))
            return f"{func}({', '.join(args)})", j
        if name in SYMBOLS:
            return SYMBOLS[name], i + 1
        raise _Unsupported(name)
    if re.fullmatch(r"\d+(\.\d+)?", t):
        return t, i + 1
    if t.isascii() and t.isalpha():
        return (t if len(t) == 1 else _string(t)), i + 1
    if t in CHARS:
        return CHARS[t], i + 1
    if not t.isascii() and t.isprintable():
        return _string(t), i + 1
    raise _Unsupported(t)


def _math(tex: str, display: bool) -> str:
    typst = tex_to_typst(tex)
    if typst is None:                 # outside the whitelist: show the formula as written
        return f"#raw(block: {'true' if display else 'false'}, {lit(tex.strip())})"
    return f"$ {typst} $" if display else f"${typst}$"


# ---- the syntax tree -> Typst ------------------------------------------------------------

def _blocks(node) -> str:
    return "\n\n".join(filter(None, (_block(child) for child in node.children)))


def _content(node) -> str:
    """A node's children as one content block's body."""
    return _blocks(node) if node.children and not node.children[0].type == "inline" else _inline_of(node)


def _inline_of(node) -> str:
    return "".join(_inline(c) for c in node.children)


def _block(node) -> str:
    kind = node.type
    if kind == "paragraph":
        return _inline_of(node.children[0]) if node.children else ""
    if kind == "heading":
        return f"#strong[{_inline_of(node.children[0])}]"
    if kind in ("bullet_list", "ordered_list"):
        items = ", ".join(f"[{_blocks(item)}]" for item in node.children)
        if kind == "bullet_list":
            return f"#list({items})"
        start = node.attrs.get("start", 1)
        return f"#enum(start: {int(start)}, {items})"
    if kind == "blockquote":
        return f"#quote(block: true)[{_blocks(node)}]"
    if kind in ("fence", "code_block"):
        info = (node.info or "").split()[0] if kind == "fence" and node.info else ""
        lang = f"lang: {lit(info)}, " if LANG.match(info) else ""
        return f"#raw(block: true, {lang}{lit(node.content.rstrip(chr(10)))})"
    if kind == "hr":
        return "#line(length: 100%)"
    if kind == "math_block":
        return _math(node.content, display=True)
    if kind == "table":
        return _table(node)
    if kind == "inline":
        return _inline_of(node)
    return esc(node.content or "")


def _table(node) -> str:
    rows, align = [], []
    for section in node.children:                      # thead, tbody
        for tr in section.children:
            cells = []
            for cell in tr.children:
                style = cell.attrs.get("style", "")
                if section.type == "thead":
                    align.append({"text-align:center": "center", "text-align:right": "right"}.get(style, "left"))
                body = _inline_of(cell.children[0]) if cell.children else ""
                cells.append(f"[*{body}*]" if section.type == "thead" else f"[{body}]")
            rows.append((section.type, cells))
    width = max((len(c) for _, c in rows), default=1)
    align = (align + ["left"] * width)[:width]
    head = [", ".join(c) for kind, c in rows if kind == "thead"]
    body = [", ".join(c + ["[]"] * (width - len(c))) for kind, c in rows if kind != "thead"]
    parts = ([f"table.header({head[0]})"] if head else []) + body
    return (f"#table(columns: {width}, align: ({', '.join(align)},), stroke: 0.4pt + gray, "
            + ", ".join(parts) + ")")


def _inline(node) -> str:
    kind = node.type
    if kind == "text":
        return esc(node.content)
    if kind == "code_inline":
        return f"#raw({lit(node.content)})"
    if kind == "softbreak":
        return " "
    if kind == "hardbreak":
        return " \\\n"
    if kind == "strong":
        return f"#strong[{_inline_of(node)}]"
    if kind == "em":
        return f"#emph[{_inline_of(node)}]"
    if kind == "s":
        return f"#strike[{_inline_of(node)}]"
    if kind == "link":
        href = node.attrs.get("href", "")
        inner = _inline_of(node)
        return f"#link({lit(href)})[{inner}]" if str(href).startswith(("http://", "https://")) else inner
    if kind == "math_inline":
        return _math(node.content, display=node.markup == "$$")
    return esc(node.content or "")
