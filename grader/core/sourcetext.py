"""C++/CUDA source text: comments and literals blanked so that scans see only code. A shared
leaf (imports nothing of the grader): the build (grader/build/compile.py) and the integrity scan
(grader/judge/integrity.py) both read sources through it.
"""
from __future__ import annotations

import re


def strip_comments(text: str, strings_too: bool = True) -> str:
    """`text` with comments (and string/char literals) replaced by spaces; newlines kept,
    so line numbers and columns still match."""
    out, i, n = [], 0, len(text)

    def blank(s: str) -> str:
        return re.sub(r"[^\n]", " ", s)
    while i < n:
        c = text[i]
        two = text[i:i + 2]
        if two == "//":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(blank(text[i:j])); i = j
        elif two == "/*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(blank(text[i:j])); i = j
        elif c == "R" and text[i + 1:i + 2] == '"' and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^()\\ ]{0,16})\(', text[i:])
            if m:
                end = text.find(f"){m[1]}\"", i + m.end())
                j = n if end < 0 else end + len(m[1]) + 2
                out.append(blank(text[i:j]) if strings_too else text[i:j]); i = j
            else:
                out.append(c); i += 1
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + blank(text[i + 1:j - 1]) + text[j - 1:j] if strings_too else text[i:j]); i = j
        else:
            out.append(c); i += 1
    return "".join(out)


_GLOBAL = re.compile(r"__global__\s+(?:(?:void|static|inline|__forceinline__|__noinline__|"
                     r"__launch_bounds__\s*\((?:[^()]|\([^()]*\))*\))\s*)*(\w+)\s*\(")


def kernel_names(cuda_src: str) -> set[str]:
    """The names of the `__global__` functions a CUDA source defines."""
    return set(_GLOBAL.findall(strip_comments(cuda_src)))


def function_names(python_src: str) -> set[str]:
    """The functions a Python (Triton) source defines: its jit kernels are among them, and
    Triton names a kernel after its function."""
    import ast
    try:
        return {n.name for n in ast.walk(ast.parse(python_src)) if isinstance(n, ast.FunctionDef)}
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
