"""The Triton allowlist: what a `_TRITON_SRC` may say, decided from its syntax tree alone.

A Triton submission is Python, and Python reaches everything: one `getattr` on a string,
one `__import__`, one attribute chain through a module's own imports, and a kernel can
call SDPA, patch the harness or read the judge's memory. So the judge never asks what a
name *means* at run time; it reads the source's syntax tree (never imported in the
judge) and accepts only what is listed here. Everything else is a strict flag
(`cheat_suspected`) naming the line:

- imports: `torch`, `triton`, `triton.language`, `math` (any alias); `from triton import`
  and `from math import` of listed names; nothing else, no `*`;
- a module is only ever the left side of an attribute (`tl.load`): it is never a value
  (`t = torch`, `f(torch)`), never rebound, and its attribute must be on its list
  (`torch.empty`, yes; `torch.matmul`, `torch.ops`, `torch.nn`, no);
- on anything else (a tensor, a shape) only the listed attributes: shapes, strides,
  views, allocation (`q.stride(2)`, `q.new_empty(...)`), and inside an `@triton.jit`
  function the Triton tensor's methods (`x.to(tl.float32)`, `s.max(axis=1)`);
- no attribute that starts with `_`, no name that starts with `__`, no builtin outside a
  short list (no `getattr`, `eval`, `exec`, `open`, `globals`, `type`, ...); a global a
  function reads is bound by a statement at the top level of the file (not under an `if`:
  Triton's interpreter fills missing globals with its own); no class, `global`, `with`,
  `del`, `async` or generator; no attribute is assigned;
- imports at the top level only, one module per name, never rebound (`from triton import
  jit` too);
- no string with a line that starts with `def` or `@` (Triton re-reads a kernel's source
  from the file: such a string could become the kernel);
- decorators only `triton.jit`, `triton.autotune(...)`, `triton.heuristics(...)`;
- no `@` on the host (a torch matmul); in a jit function `@` is Triton's `tl.dot`.

The second net is at run time: the operation audit (grader/judge/integrity.py OpAudit) records
every ATen operation a checked call dispatches, and on a GPU the judge lists the kernels
the call launched (grader/judge/launches.py): a Triton submission may launch only the Triton
kernels of its own file.
"""
from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass

MODULES = {"torch", "triton", "triton.language", "math"}

# attribute -> the module it is, for attributes that are modules themselves
SUBMODULES = {("triton", "language"): "triton.language", ("torch", "cuda"): "torch.cuda",
              ("triton.language", "math"): "triton.language.math",
              ("triton.language", "extra"): "triton.language.extra",
              ("triton.language.extra", "cuda"): "triton.language.extra.cuda",
              ("triton.language.extra", "libdevice"): "libdevice",
              ("triton.language.extra.cuda", "libdevice"): "libdevice"}

MODULE_ATTRS = {
    "torch": frozenset("""
        empty empty_like empty_strided zeros zeros_like full full_like float32 float16 bfloat16
        float64 float int8 int16 int32 int64 uint8 bool long int device Size finfo iinfo cuda Tensor dtype
    """.split()),
    "torch.cuda": frozenset("""
        current_device device_count get_device_capability get_device_properties is_available synchronize
    """.split()),
    "triton": frozenset("jit autotune heuristics Config cdiv next_power_of_2 language".split()),
    "triton.language": frozenset("""
        program_id num_programs arange zeros zeros_like full load store dot trans permute reshape view
        broadcast broadcast_to expand_dims where maximum minimum max min sum argmax argmin exp exp2 log
        log2 sqrt sqrt_rn rsqrt abs fma cdiv sigmoid softmax cumsum cumprod reduce associative_scan
        float16 bfloat16 float32 float64 int1 int8 int16 int32 int64 uint8 uint16 uint32 uint64
        constexpr static_assert static_print static_range device_assert device_print multiple_of
        max_contiguous max_constancy make_block_ptr advance range split join cat interleave clamp
        div_rn fdiv floor ceil sin cos erf umulhi debug_barrier swizzle2d flip sort ravel cast
        dtype pointer_type tensor assume
        atomic_add atomic_max atomic_min atomic_cas atomic_xchg atomic_and atomic_or atomic_xor
        make_tensor_descriptor load_tensor_descriptor store_tensor_descriptor math
    """.split()),
    # tl.math: the same device functions under their older home (the Triton tutorials' tl.math.exp2)
    "triton.language.math": frozenset("""
        exp exp2 log log2 sqrt sqrt_rn rsqrt abs fma cdiv div_rn fdiv floor ceil sin cos erf umulhi
        maximum minimum max min
    """.split()),
    "math": frozenset("sqrt log log2 exp e pi inf ceil floor isqrt gcd prod".split()),
    "triton.language.extra": frozenset({"cuda", "libdevice"}),
    "triton.language.extra.cuda": frozenset({"libdevice"}),
    # libdevice: CUDA's math library as device functions (tl.extra.cuda.libdevice.exp2 ...)
    "libdevice": frozenset("""
        exp exp2 exp10 expm1 log log2 log10 log1p sqrt rsqrt cbrt fast_expf fast_exp2f fast_logf
        fast_log2f fast_dividef div_rn div_rz div_rd div_ru rcp_rn fma fmaf fmax fmin fabs abs floor
        ceil trunc round rint nearbyint pow powf tanh sinh cosh sin cos tan erf erfc isnan isinf
        signbit copysign max min mul24 umulhi saturatef
    """.split()),
}

# the same, after `from triton import X` / `from math import X`
FROM_IMPORTS = {"triton": MODULE_ATTRS["triton"], "math": MODULE_ATTRS["math"],
                "__future__": frozenset({"annotations"}), "triton.language.extra": frozenset({"libdevice"}),
                "triton.language.extra.cuda": frozenset({"libdevice"})}

# attributes of values (tensors, shapes, devices) on the host: metadata, views, allocation
HOST_ATTRS = frozenset("""
    shape stride size dtype device numel dim ndim is_contiguous contiguous is_cuda element_size
    data_ptr new_empty new_zeros view reshape permute transpose flatten unsqueeze squeeze index
    multi_processor_count to float type get_device eps tiny min max bits
    append extend items keys values get kwargs num_warps num_stages
""".split())
# and inside an @triton.jit function, a Triton tensor's methods (device code)
JIT_ATTRS = HOST_ATTRS | frozenset("""
    to T trans sum max min argmax argmin cumsum cumprod split ravel sort flip reduce broadcast_to
    expand_dims exp exp2 log log2 sqrt abs value element_ty type load store
""".split())

ALLOWED_BUILTINS = frozenset("""
    range len min max abs int float bool tuple list dict str round pow divmod isinstance enumerate
    zip print all any sorted reversed map filter iter next True False None
    ValueError RuntimeError AssertionError NotImplementedError TypeError IndexError Exception
""".split())
FORBIDDEN_BUILTINS = frozenset(dir(builtins)) - ALLOWED_BUILTINS

# attributes that compute attention or part of it, or reach torch's kernels: named as
# such in the message (they are refused like every other name off the lists)
COMPUTE = frozenset("""
    matmul mm bmm baddbmm addmm einsum tensordot dot mv linear softmax log_softmax exp sum amax
    max mean logsumexp scaled_dot_product_attention nn functional ops special linalg
    _scaled_dot_product_attention_math _scaled_dot_product_flash_attention
""".split())

JIT_DECORATORS = {("triton", "jit")}
DECORATORS = {("triton", "jit"), ("triton", "autotune"), ("triton", "heuristics")}

FORBIDDEN_NODES = {
    ast.ClassDef: "a class", ast.Global: "`global`", ast.Nonlocal: "`nonlocal`", ast.With: "`with`",
    ast.AsyncWith: "`async with`", ast.Delete: "`del`", ast.AsyncFunctionDef: "an async function",
    ast.Await: "`await`", ast.Yield: "a generator (`yield`)", ast.YieldFrom: "a generator (`yield from`)",
    ast.AsyncFor: "`async for`", ast.Match: "`match`",
}


@dataclass(frozen=True)
class Finding:
    line: int          # line of the source (1-based)
    code: str          # torch_compute | triton_allowlist
    what: str          # one sentence
    col: int = 0       # where the construct ends on its line: the leftmost is said first


def audit(text: str) -> list[Finding]:
    """Every construct of a Triton source that is off the allowlist (empty: it may run)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []           # the judge reports the syntax error itself, with its line
    try:
        return _Auditor(tree).run()
    except (RecursionError, MemoryError):
        return [Finding(1, "triton_allowlist", "the source is nested too deeply to be audited (a very long "
                        "expression or deep nesting): split it")]


class _Auditor(ast.NodeVisitor):
    def __init__(self, tree: ast.Module):
        self.tree = tree
        self.findings: list[Finding] = []
        self.aliases: dict[str, str] = {}       # name -> module it is bound to by an import
        self.imported: dict[str, tuple] = {}    # name -> (module, name) of a `from ... import`
        self.bound: set[str] = set()            # every name the file binds anywhere
        self.jit_depth = 0

    def run(self) -> list[Finding]:
        for node in ast.walk(self.tree):
            self._collect(node)
        self.jit_names = {n.name for n in self.tree.body if isinstance(n, ast.FunctionDef)
                          and any(self._qualified(d.func if isinstance(d, ast.Call) else d) in JIT_DECORATORS
                                  for d in n.decorator_list)}
        self._scopes()
        self.visit(self.tree)
        seen, out = set(), []
        for f in sorted(self.findings, key=lambda f: (f.line, f.col)):
            if (f.line, f.what) not in seen:
                seen.add((f.line, f.what))
                out.append(f)
        return out

    def _scopes(self) -> None:
        """Names resolved as Python resolves them (symtable): a global a function reads must be
        bound at the top level of the file, or be an allowed builtin. (One file-wide set of
        bound names would accept `inspect` in a function because another function has a local
        `inspect`, and Triton's interpreter puts its own `inspect` into the module's globals.)"""
        import symtable
        try:
            top = symtable.symtable(ast.unparse(self.tree), "<triton>", "exec")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            self.refuse(self.tree, "the names of this source could not be resolved by scope (nested too "
                        "deeply?): split it")
            return
        # bound at the top level: by a statement directly in the file's body, which runs whenever
        # the file is loaded (not one under `if False:`, a `for`, a `try`: a name they leave unbound
        # would be filled by Triton's interpreter with its own globals: np, inspect, _patch_attr)
        module_level = set(self.aliases) | set(self.imported)
        for stmt in self.tree.body:
            if isinstance(stmt, ast.FunctionDef):
                module_level.add(stmt.name)
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and (not isinstance(stmt, ast.AnnAssign) or stmt.value):
                for target in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]):
                    module_level |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        loads: dict = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                loads.setdefault(node.id, []).append(node)

        def where(name: str, table):
            here = sorted(loads.get(name, []), key=lambda n: n.lineno)
            inside = [n for n in here if n.lineno >= table.get_lineno()]
            return (inside or here or [self.tree])[0]

        def walk(table) -> None:
            for sym in table.get_symbols():
                name = sym.get_name()
                if not sym.is_referenced() or name.startswith("__") or name in FORBIDDEN_BUILTINS:
                    continue
                reads_global = table.get_type() == "module" or sym.is_global()
                if reads_global and name not in module_level and name not in ALLOWED_BUILTINS:
                    self.refuse(where(name, table), f"`{name}` is read as a global but no plain statement at the "
                                "top level of this file binds it (a name bound only under an `if`, a `for` or a "
                                "`try` does not count: bind it with an assignment first), nor is it an allowed "
                                "builtin")
            for child in table.get_children():
                walk(child)
        walk(top)

    def refuse(self, node: ast.AST, what: str, code: str = "triton_allowlist") -> None:
        self.findings.append(Finding(getattr(node, "lineno", 1), code, what, getattr(node, "end_col_offset", 0) or 0))

    # -- names the file binds --------------------------------------------------------------
    def _alias(self, node: ast.AST, name: str, module: str) -> None:
        if self.aliases.get(name, module) != module:
            self.refuse(node, f"`{name}` is imported as two modules ({self.aliases[name]}, {module}): one "
                        "name, one module")
        self.aliases[name] = module

    def _collect(self, node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    self._alias(node, a.asname, a.name)
                else:
                    self._alias(node, a.name.split(".")[0], a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module in FROM_IMPORTS and not node.level:
            for a in node.names:
                name = a.asname or a.name
                if (node.module, a.name) in SUBMODULES:
                    self._alias(node, name, SUBMODULES[(node.module, a.name)])
                else:
                    self.bound.add(name)
                    self.imported[name] = (node.module, a.name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.bound.add(node.name)
        elif isinstance(node, ast.arg):
            self.bound.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            self.bound.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            self.bound.add(node.name)

    # -- statements ------------------------------------------------------------------------
    def generic_visit(self, node: ast.AST) -> None:
        what = FORBIDDEN_NODES.get(type(node))
        if what:
            self.refuse(node, f"{what} is not allowed in a Triton submission")
            return
        super().generic_visit(node)

    def _top_level(self, node: ast.AST) -> bool:
        return any(node is stmt for stmt in self.tree.body)

    def visit_Import(self, node: ast.Import) -> None:
        if not self._top_level(node):
            self.refuse(node, "an import inside a function, an `if` or a `try`: imports go at the top level "
                        "of the file, unconditionally")
        for a in node.names:
            if a.name not in MODULES:
                self.refuse(node, f"`import {a.name}`: a Triton submission imports only torch, triton, "
                            "triton.language and math")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if not self._top_level(node):
            self.refuse(node, "an import inside a function, an `if` or a `try`: imports go at the top level "
                        "of the file, unconditionally")
        allowed = FROM_IMPORTS.get(node.module or "") if not node.level else None
        for a in node.names:
            if allowed is None or a.name not in allowed:
                self.refuse(node, f"`from {'.' * node.level}{node.module or ''} import {a.name}`: only "
                            "`from triton import` jit, autotune, heuristics, Config, cdiv, next_power_of_2, "
                            "language and `from math import` math's functions")

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._name(node, node.name, store=True)
        jit = False
        for dec in node.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            resolved = self._qualified(target)
            if resolved not in DECORATORS:
                self.refuse(dec, "a decorator other than triton.jit, triton.autotune(...) or "
                            "triton.heuristics(...) (a decorator runs code when the file is loaded)")
            jit = jit or resolved in JIT_DECORATORS
            self.visit(dec)
        for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs + \
                [x for x in (node.args.vararg, node.args.kwarg) if x]:
            self._name(a, a.arg, store=True)
            if a.annotation is not None:
                self.visit(a.annotation)
        for d in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
            self.visit(d)
        if node.returns is not None:
            self.visit(node.returns)
        self.jit_depth += jit
        for stmt in node.body:
            self.visit(stmt)
        self.jit_depth -= jit

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self._name(node, node.name, store=True)
        super().generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        """A string holding a line that starts with `def` or `@`: Triton reads a kernel's source
        again from the file, cut at a `def` line (the interpreter at the last one), so such a
        string would become the kernel the judge did not read."""
        if isinstance(node.value, (str, bytes)):
            text = node.value.decode("latin-1") if isinstance(node.value, bytes) else node.value
            if any(line.lstrip().startswith(("def ", "def\t", "async def")) for line in text.splitlines()[1:]):
                self.refuse(node, "a string with a line that starts with `def`: Triton re-reads kernels from the "
                            "file's lines, so it could become a kernel no one audited")

    def visit_Lambda(self, node: ast.Lambda) -> None:
        for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
            self._name(a, a.arg, store=True)
        super().generic_visit(node.args)
        self.visit(node.body)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.MatMult) and not self.jit_depth:
            self.refuse(node, "`@` outside an @triton.jit function is torch's matmul: compute in your "
                        "Triton kernel", code="torch_compute")
        super().generic_visit(node)

    # -- names and attributes ----------------------------------------------------------------
    def _name(self, node: ast.AST, name: str, store: bool) -> None:
        if name == "__name__" and not store:
            return                                   # `if __name__ == "__main__":` (never true in the grader)
        if name.startswith("_") and name.startswith("__"):
            self.refuse(node, f"`{name}`: names starting with __ are not allowed in a Triton submission")
        elif name in FORBIDDEN_BUILTINS:
            self.refuse(node, f"`{name}` is not allowed in a Triton submission (it can reach what the "
                        "allowlist refuses)")
        elif store and name in self.aliases:
            self.refuse(node, f"`{name}` names a module imported here: it cannot be rebound")
        elif store and name in self.imported:
            self.refuse(node, f"`{name}` is imported from {self.imported[name][0]}: it cannot be rebound")

    def visit_Name(self, node: ast.Name) -> None:
        store = not isinstance(node.ctx, ast.Load)
        self._name(node, node.id, store)
        if store or node.id.startswith("__") or node.id in FORBIDDEN_BUILTINS:
            return
        if node.id in self.aliases:
            self.refuse(node, f"the module `{node.id}` used as a value: a module may only be written "
                        f"as `{node.id}.<name>`")
        elif node.id in getattr(self, "jit_names", ()) and not self.jit_depth and not self._launched(node):
            self.refuse(node, f"`{node.id}` is a @triton.jit kernel: on the host it is only launched, "
                        f"`{node.id}[grid](...)` (called as a function, Triton's interpreter runs its body as "
                        "plain Python on torch tensors)")
        elif node.id not in self.bound and node.id not in ALLOWED_BUILTINS:
            self.refuse(node, f"`{node.id}` is neither defined in this file nor an allowed builtin")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        attr = node.attr
        if attr.startswith("_"):
            self.refuse(node, f"`.{attr}`: attributes starting with _ are not allowed in a Triton submission",
                        code="torch_compute" if "attention" in attr or attr.strip("_") in COMPUTE
                        else "triton_allowlist")
            return
        if not isinstance(node.ctx, ast.Load):
            self.refuse(node, f"`.{attr} = ...`: a Triton submission assigns no attribute (it would patch "
                        "torch, Triton or the grader's objects)")
            return
        module = self._module(node.value)
        if module is not None:
            if attr not in MODULE_ATTRS.get(module, ()):
                compute = attr in COMPUTE and module.startswith("torch")
                self.refuse(node, f"`{module}.{attr}`" + (
                    " computes with torch's kernels: a Triton submission computes attention in its own "
                    "Triton kernels (torch is for allocation and shapes only)" if compute else
                    f" is not on the Triton allowlist for {module}"),
                    code="torch_compute" if compute else "triton_allowlist")
                return
            if (module, attr) in SUBMODULES and not self._is_base(node):
                self.refuse(node, f"the module `{module}.{attr}` used as a value: write `{module}.{attr}.<name>`")
            return
        if self._root_alias(node.value):
            base = self._dotted(node.value)
            if self._module(node.value) is None and self._listed(node.value):
                # an attribute of a listed member (`tl.softmax.get_capture_scope`, `torch.empty.x`):
                # a function's or a dtype's own attributes lead back into Python; none is needed
                self.refuse(node, f"`{base}.{attr}`: attributes of {base} are not on the Triton allowlist")
                return
            self.visit(node.value)     # `torch.nn.functional`: said once, at `torch.nn`
            return
        allowed = JIT_ATTRS if self.jit_depth else HOST_ATTRS
        if attr not in allowed:
            compute = attr in COMPUTE
            self.refuse(node, f"`.{attr}`" + (" is torch compute on a tensor: compute in your Triton kernel"
                                              if compute else " is not on the Triton allowlist"
                                              + ("" if self.jit_depth else " for host code")),
                        code="torch_compute" if compute else "triton_allowlist")
        self.visit(node.value)

    def _module(self, node: ast.AST) -> str | None:
        """The module `node` is (an import alias, or a submodule attribute of one), else None."""
        if isinstance(node, ast.Name) and node.id in self.aliases:
            return self.aliases[node.id]
        if isinstance(node, ast.Attribute):
            base = self._module(node.value)
            if base is not None:
                return SUBMODULES.get((base, node.attr))
        return None

    def _listed(self, node: ast.Attribute) -> bool:
        """Whether `node` (module.member) is a member on its module's list."""
        module = self._module(node.value)
        return module is not None and node.attr in MODULE_ATTRS.get(module, ())

    def _dotted(self, node: ast.AST) -> str:
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        parts.append(getattr(node, "id", "?"))
        return ".".join(reversed(parts))

    def _root_alias(self, node: ast.AST) -> bool:
        """Whether `node` is an attribute chain that starts at an imported module."""
        while isinstance(node, ast.Attribute):
            node = node.value
        return isinstance(node, ast.Name) and node.id in self.aliases

    def _qualified(self, node: ast.AST) -> tuple[str, str] | None:
        """("triton", "jit") for `triton.jit` or an imported `jit`, else None."""
        if isinstance(node, ast.Attribute):
            module = self._module(node.value)
            return (module, node.attr) if module else None
        if isinstance(node, ast.Name) and node.id in self.imported:
            return self.imported[node.id]
        return None

    def _launched(self, node: ast.Name) -> bool:
        """`kernel[grid]`: the name is the value of a subscript that is then called."""
        parent = self._parents().get(id(node))
        if not (isinstance(parent, ast.Subscript) and parent.value is node):
            return False
        call = self._parents().get(id(parent))
        return isinstance(call, ast.Call) and call.func is parent

    def _is_base(self, node: ast.AST) -> bool:
        parent = self._parents().get(id(node))
        return isinstance(parent, ast.Attribute) and parent.value is node

    def _parents(self) -> dict:
        if not hasattr(self, "_parent_map"):
            self._parent_map = {id(c): p for p in ast.walk(self.tree) for c in ast.iter_child_nodes(p)}
        return self._parent_map
