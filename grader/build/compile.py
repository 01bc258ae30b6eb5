"""Stage 2, compile: build a kernel source with `torch.utils.cpp_extension.load_inline`.

How a build is made fast (measured in reference/NOTES.md):
- Each build folder is keyed by a hash of everything that affects the binary, under
  the ignored cache folder; unchanged sources are never recompiled (a failed build
  is remembered too, with its log).
- No pybind11 per build: one appended C function, `grader_attention_entry`, hands
  the address of `attention` to a small binding module built once
  (`grader/build/dispatch.cpp`).
- Headers in tiers, the fastest first (`grader/build/tiers.py`): a CUDA source against the
  proxy headers (`grader/build/prelude_cuda/`: declarations only, each call done by the real
  ATen in the binding module; ~1 s per nvcc pass instead of ~3), then the lean ones
  (`grader/build/prelude/`), then the real torch headers. A tier only changes compile time:
  any failure goes on to the next tier, and only the full tier's errors are reported.
  A scan of the source skips a tier it cannot pass, each fallback is reported in one
  line (`on_note`) naming the `.py` line that caused it, and the tiers an earlier
  build of the same source needed are remembered.
- `#line` directives make the compiler report lines of the student's `.py` file.
"""
from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..core.cache import _locked, cache_root, shared_root  # noqa: F401 - their old home: grader.build.compile.cache_root
from ..core.config import Config
from .parse import Source
from ..core.result import CompileResult
from .tiers import TIERS, Stop, Walk, proxy_defines, walk

PRELUDE_DIR = Path(__file__).resolve().parent / "prelude"
PROXY_DIR = Path(__file__).resolve().parent / "prelude_cuda"
PROXY_ABI_DIR = Path(__file__).resolve().parent / "proxy_abi"   # shared with dispatch.cpp
COMMON_HEADERS_DIR = Path(__file__).resolve().parent / "prelude_common"   # included by both preludes
CPU_WHEEL_PRELUDE = Path(__file__).resolve().parent / "prelude_cpu_wheel"
DISPATCH_SRC = Path(__file__).resolve().parent / "dispatch.cpp"
ENTRY_FILE = "grader_entry"   # the file name compile errors in the appended entry carry
BUILD_VERSION = "7"           # bump when the way builds are made changes
SIGNATURE = "torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v)"

# The entry point appended to every kernel source. The static_cast makes the
# compiler check the contract's exact signature.
ENTRY_CODE = """
extern "C" __attribute__((visibility("default"))) void* grader_attention_entry() {
    using Fn = at::Tensor (*)(at::Tensor, at::Tensor, at::Tensor);
    return reinterpret_cast<void*>(static_cast<Fn>(&attention));
}
"""

_MAX_LOG_LINES = 40
# the object file each kind's source is compiled into, beside the library load_inline links
# (the link audit reads it: grader/judge/linkaudit.py; a build without it is built again)
KERNEL_OBJECT = {"cpp": "main.o", "cuda": "cuda.cuda.o"}


def has_objects(library, kind: str) -> bool:
    """Whether the kernel's object file is beside its built library (a Path)."""
    return (library.parent / KERNEL_OBJECT[kind]).is_file()


@dataclass(frozen=True)
class Kernel:
    """A built kernel: call it like `attention(q, k, v)`."""
    library: str
    address: int
    observed: bool = True       # its calls' operators counted (grader/build/dispatch.cpp); False: a reference

    def __call__(self, q, k, v):
        if self.observed:
            return _dispatch().call_kernel(self.address, q, k, v)
        return _dispatch().call_unobserved(self.address, q, k, v)


def _clear_stale_baton(build: Path) -> None:
    """Remove torch's build baton (`lock`, cpp_extension's FileBaton) left in `build` by a
    build that was killed (a timeout, an out-of-memory kill, Ctrl-C): torch waits for it to
    vanish, forever, so every later grade would hang. Called only while holding this folder's
    flock (`_locked`), so no live build of ours owns it: any baton there is stale."""
    try:
        (build / "lock").unlink()
    except FileNotFoundError:
        pass


def _torch_key() -> str:
    import sys

    import torch
    return f"{torch.__version__}|{torch.version.cuda}|{sys.version_info[:2]}"


_DISPATCH = None


def dispatch_key() -> str:
    """Key of the binding module's build folder (`dispatch-<key>` in the cache)."""
    text = DISPATCH_SRC.read_text()
    abi = (PROXY_ABI_DIR / "grader_proxy_abi.h").read_text()
    return hashlib.sha256(f"{_torch_key()}|{text}|{abi}|{process_libstdcxx()}".encode()).hexdigest()[:12]


def _dispatch():
    """The binding module (built once per torch install; ~40 s the first time)."""
    global _DISPATCH
    if _DISPATCH is None:
        from torch.utils.cpp_extension import load_inline
        text = DISPATCH_SRC.read_text()
        key = dispatch_key()
        shared = shared_root()
        built = shared / f"dispatch-{key}" / f"grader_dispatch_{key}.so" if shared else None
        if built is not None and built.is_file():      # read-only: import the built module
            import importlib.util
            spec = importlib.util.spec_from_file_location(f"grader_dispatch_{key}", built)
            _DISPATCH = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(_DISPATCH)
            return _DISPATCH
        build = cache_root() / f"dispatch-{key}"
        build.mkdir(parents=True, exist_ok=True)
        with _locked(build.with_suffix(".lock")):
            _clear_stale_baton(build)
            _DISPATCH = load_inline(f"grader_dispatch_{key}", [text], build_directory=str(build),
                                    extra_cflags=["-O2"], extra_ldflags=process_libstdcxx(),
                                    extra_include_paths=[str(PROXY_ABI_DIR)],
                                    with_cuda=False, verbose=False)
    return _DISPATCH


def prepare() -> float:
    """Build (or load) the binding module; returns the seconds it took."""
    t0 = time.perf_counter()
    _dispatch()
    return time.perf_counter() - t0


def display_file(name: str) -> str:
    """The submission's file name as `#line` directives, and so compiler messages, carry
    it: a quote, a backslash, a control character or a byte that is not UTF-8 would end
    the directive early or inject into it, so each becomes `_`."""
    return "".join(c if c.isprintable() and c not in '"\\' else "_" for c in name) or "_"


_BINDING = re.compile(r"\bPYBIND11_MODULE\s*\(")


def without_binding(text: str) -> str:
    """`text` with each PYBIND11_MODULE(...) { ... } block blanked out (spaces, newlines kept,
    so lines and columns still match). The grader calls `attention` directly and never
    imports the library as a Python module; the block's only effect would be pybind11's
    machinery linking ~100 Python C API functions (calling Python among them) into the
    student's library, where the link audit could not tell them from a call of the
    student's own. Comments and string literals are not searched; a block whose brackets
    do not balance is left as it is (the compiler reports it)."""
    from ..core.sourcetext import strip_comments
    masked = strip_comments(text)
    spans = []
    for m in _BINDING.finditer(masked):
        i = _matching(masked, m.end() - 1, "(", ")")
        if i is None:
            continue
        j = i + 1
        while j < len(masked) and masked[j].isspace():
            j += 1
        end = _matching(masked, j, "{", "}") if j < len(masked) and masked[j] == "{" else None
        if end is not None:
            spans.append((m.start(), end + 1))
    for start, end in reversed(spans):
        text = text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]
    return text


def _matching(text: str, i: int, opening: str, closing: str) -> int | None:
    """Index of the bracket closing the one at `i` (comments and strings already blanked)."""
    depth = 0
    for k in range(i, len(text)):
        if text[k] == opening:
            depth += 1
        elif text[k] == closing:
            depth -= 1
            if depth == 0:
                return k
    return None


def annotate(src: Source) -> str:
    """The source as compiled: `#line` directives map each line to the `.py` file; a
    PYBIND11_MODULE block left out (`without_binding`)."""
    lines = without_binding(src.text).split("\n")
    file = display_file(src.file)
    out = [f'#line {src.file_line(1)} "{file}"']
    for i, line in enumerate(lines):
        if i > 0:
            expected = src.file_line(i) + 1
            actual = src.file_line(i + 1)
            if actual != expected and not lines[i - 1].rstrip().endswith("\\"):
                out.append(f'#line {actual} "{file}"')
        out.append(line)
    out.append(f'#line 1 "{ENTRY_FILE}"')
    out.append(ENTRY_CODE)
    return "\n".join(out)


def _cuda_arch(cfg: Config) -> str:
    if cfg.cuda_arch != "auto":
        return cfg.cuda_arch
    import torch
    if torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability()
        return f"{major}.{minor}"
    return "9.0"


def tiers(src: Source) -> tuple[str, ...]:
    """The header tiers a source is tried with, fastest first (see the module doc)."""
    return TIERS[src.kind]


@functools.lru_cache(maxsize=1)
def _libstdcxx() -> tuple[str, ...]:
    """[the libstdc++ this process runs] (from /proc/self/maps; torch loads it), or [] where
    none shows. Every build links it by path, ahead of what the compiler adds: a g++ that has
    only a static libstdc++.a (the GPU image's /opt/gcc, 2026-11-28) otherwise copies the
    library's locale and stream code into the kernel's library, beside the shared one the
    process has, and the two copies' facet ids disagree: a `std::cout << n` in a student's
    kernel, or a message that formats a number through a stream, crashed with SIGSEGV."""
    import torch  # noqa: F401 - loads it (the keys that call this must not depend on import order)
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.rstrip("\n").split(None, 5)
                path = parts[5] if len(parts) == 6 else ""
                path = path[:-len(" (deleted)")] if path.endswith(" (deleted)") else path   # upgraded meanwhile
                # torch writes link flags unquoted into build.ninja: a path it would split is left out
                if os.path.basename(path).startswith("libstdc++.so") and os.path.isfile(path) and \
                        not any(c in path for c in " \t$:"):
                    return (path,)
    except OSError:
        pass
    return ()


def process_libstdcxx() -> list[str]:
    """`_libstdcxx`, read once a process (the library a process runs does not change)."""
    return list(_libstdcxx())


def _build_args(src: Source, cfg: Config, tier: str, link: bool = True) -> dict:
    """Everything that goes into a build, and so into its hash."""
    includes = {"proxy": [str(PROXY_DIR), str(PROXY_ABI_DIR)], "lean": [str(PRELUDE_DIR)], "full": []}[tier]
    ldflags = list(cfg.cpp_ldflags) + process_libstdcxx()
    if tier == "proxy" and link:     # the proxy's functions live in the binding module
        ldflags.append(_dispatch().__file__)
    defines = proxy_defines(src.text) if tier == "proxy" else []
    args = {"cflags": list(cfg.cpp_flags) + defines, "ldflags": ldflags, "includes": includes, "kind": src.kind}
    if src.kind == "cuda":
        arch = _cuda_arch(cfg)
        code = arch.replace(".", "")
        args["cuda_flags"] = list(cfg.cuda_flags) + [f"-gencode=arch=compute_{code},code=sm_{code}"] + defines
    return args


def host_cpu() -> str:
    """The host CPU as -march=native sees it: model name and feature flags (/proc/cpuinfo),
    so a build cache shared between machines (a cluster's $HOME) never hands a node a
    binary built for instructions it lacks."""
    keep = ("vendor_id", "model name", "flags", "cpu family", "model", "Features", "CPU implementer", "CPU part")
    try:
        with open("/proc/cpuinfo") as f:
            first = f.read().split("\n\n")[0]
    except OSError:
        import platform
        return f"{platform.machine()}|{platform.processor()}"
    return "|".join(line.split(":", 1)[1].strip() for line in first.splitlines()
                    if ":" in line and line.split(":", 1)[0].strip() in keep)


def source_hash(src: Source, cfg: Config) -> str:
    """Key of a build folder: changes whenever anything that affects the binary does."""
    h = hashlib.sha256()
    headers = sorted(p for d in (PRELUDE_DIR, PROXY_DIR, PROXY_ABI_DIR, COMMON_HEADERS_DIR, CPU_WHEEL_PRELUDE)
                     for p in d.rglob("*.h"))
    for part in (BUILD_VERSION, _torch_key(), host_cpu(), annotate(src), json.dumps(_build_args(src, cfg, "lean")),
                 DISPATCH_SRC.read_text(), *(p.read_text() for p in headers)):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


def trim_log(raw: str, file: str) -> str:
    """Keep the compiler's diagnostics about the student's file; drop build-tool noise."""
    kept: list[str] = []
    in_diagnostic = False
    for line in raw.splitlines():
        if re.match(r"^\[\d+/\d+\]|^FAILED:|^ninja: |^Error building extension|^\S*(c\+\+|g\+\+|nvcc|gcc)\s", line):
            in_diagnostic = False
            continue
        is_ours = line.startswith(f"{file}:") or line.startswith(f"{ENTRY_FILE}:")
        if is_ours or "error" in line.lower() and not line.startswith("In file included"):
            kept.append(line)
            in_diagnostic = is_ours
        elif in_diagnostic and re.match(r"^\s*\d*\s*\|", line):
            kept.append(line)       # the source echo and caret under a diagnostic
        else:
            in_diagnostic = False
    if not kept:
        kept = [ln for ln in raw.splitlines() if ln.strip()][-_MAX_LOG_LINES:]
    if len(kept) > _MAX_LOG_LINES:
        extra = len(kept) - _MAX_LOG_LINES
        kept = kept[:_MAX_LOG_LINES] + [f"... {extra} more lines (full log: build.log in the build folder)"]
    log = "\n".join(kept)
    if f"{ENTRY_FILE}:" in log:
        log = (f"the grader could not find `{SIGNATURE}` with exactly that signature; define it "
               f"at namespace scope (not static, not in a namespace).\n" + log)
    return log


def echo_source(log: str, src: Source) -> str:
    """Under each `file:L:C: error/warning` line, show line L of the student's file and
    a caret (gcc cannot: the file it was told about by #line is not in the build folder)."""
    by_file_line: dict[int, str] = {}
    for i, text in enumerate(src.text.split("\n"), start=1):
        by_file_line.setdefault(src.file_line(i), text)
    # gcc: "file:L:C: error: ..."; nvcc's front end: "file(L): error: ..."
    pattern = re.compile(rf"^{re.escape(display_file(src.file))}(?::(\d+):(\d+):|\((\d+)\):) (?:fatal )?(error|warning)")
    out = []
    lines = log.splitlines()
    for n, line in enumerate(lines):
        out.append(line)
        m = pattern.match(line)
        already_echoed = n + 1 < len(lines) and re.match(r"^\s*\d+\s*\|", lines[n + 1])
        if not m or already_echoed:
            continue
        line_no = int(m.group(1) or m.group(3))
        if line_no in by_file_line:
            out.append(f"{line_no:>5} | {by_file_line[line_no]}")
            if m.group(2):
                out.append(f"{'':>5} | {' ' * (int(m.group(2)) - 1)}^")
    return "\n".join(out)


def _run_load_inline(src: Source, cfg: Config, build: Path, name: str, tier: str) -> str:
    """Build `src` into `build`; return the path of the shared library."""
    from torch.utils.cpp_extension import load_inline
    args = _build_args(src, cfg, tier)
    text = annotate(src)
    kwargs = dict(name=name, build_directory=str(build), extra_cflags=args["cflags"],
                  extra_ldflags=args["ldflags"], extra_include_paths=args["includes"],
                  is_python_module=False, no_implicit_headers=True, verbose=False)
    if src.kind == "cuda":
        kwargs.update(cpp_sources=[""], cuda_sources=[text], extra_cuda_cflags=args["cuda_flags"],
                      with_cuda=True)
    else:
        kwargs.update(cpp_sources=[text], with_cuda=False)
    _clear_stale_baton(build)          # the callers hold build's flock (_locked)
    load_inline(**kwargs)
    # a second load_inline of one name in a process (the full-header retry) is versioned
    # by torch: name_v1.so
    built = sorted(build.glob(f"{name}*.so"), key=lambda p: p.stat().st_mtime)
    return str(built[-1] if built else build / f"{name}.so")


Note = Callable[[str], None]


def compile_source(src: Source, cfg: Config, on_note: Note | None = None,
                   load: bool = True) -> tuple[CompileResult, Kernel | None]:
    """Build `src` (or reuse an identical earlier build) and load it (`load=False`: build
    only, the kernel is None; the judge audits the library before anything of it runs).
    `on_note` is called with one line each time the build falls back to a slower header
    tier, as it starts."""
    key = source_hash(src, cfg)
    name = f"attn_{src.kind}_{key}"
    shared = shared_root()
    if shared is not None:     # built outside the sandbox (a reference kernel): load, write nothing
        reused = _reuse(shared / "build" / name, name, src.kind, load)
        if reused is not None and reused[0].ok:
            return reused
    root = cache_root() / "build" / name
    marker = root / "RESULT.json"
    with _locked(root.with_suffix(".lock")):
        reused = _reuse(root, name, src.kind, load)
        if reused is not None:
            return reused
        t0 = time.perf_counter()
        walk = _walk_tiers(src, key, lambda tier: _build_tier(src, cfg, root, name, tier), on_note)
        seconds = time.perf_counter() - t0
        library = walk.payload if walk.ok else ""
        log = "" if walk.ok else echo_source(trim_log(walk.log, display_file(src.file)), src)
        marker.parent.mkdir(parents=True, exist_ok=True)
        # the library relative to its build folder: a cache that moves (a copied repo, another
        # GRADER_CACHE) still finds it
        (root / "RESULT.json.tmp").write_text(json.dumps(
            {"ok": walk.ok, "library": os.path.relpath(library, root) if walk.ok else "", "log": log,
             "seconds": seconds, "headers": walk.tier if walk.ok else "", "tier": walk.tier,
             "fallback": walk.fallback}))
        os.replace(root / "RESULT.json.tmp", marker)
    result = CompileResult(ok=walk.ok, seconds=round(seconds, 2), log=log, module=name, build_dir=str(root),
                           headers=walk.tier if walk.ok else "", tier=walk.tier, fallback=walk.fallback,
                           library_rel=os.path.relpath(library, root) if walk.ok else "")
    return result, (_load(library) if walk.ok and load else None)


def toolchain_id() -> str:
    """The compilers a build runs (each one's real path, size and time), hashed: a cache
    shared between machines keeps one baseline per toolchain."""
    h = hashlib.sha256()
    for tool in (os.environ.get("CXX", "c++"), "c++", "nvcc"):
        where = shutil.which(tool.split()[0]) if tool.strip() else None
        if where:
            real = os.path.realpath(where)
            st = os.stat(real)
            h.update(f"{real}|{st.st_size}|{int(st.st_mtime)}\0".encode())
    return h.hexdigest()[:8]


def build_in_tier(src: Source, cfg: Config, tier: str) -> Path | None:
    """The library of `src` built in header tier `tier` alone, no fallback (the link
    audit's baselines), reused when built before; None when it does not compile there."""
    name = f"attn_{src.kind}_{source_hash(src, cfg)}_{tier}_{toolchain_id()}"
    root = cache_root() / "build" / name
    with _locked(root.with_suffix(".lock")):
        marker = root / "LIBRARY"
        built = root / marker.read_text() if marker.is_file() else None
        if built is not None and built.is_file() and has_objects(built, src.kind):
            return built
        ok, _, library = _build_tier(src, cfg, root, name, tier)
        if not ok:
            return None
        marker.write_text(os.path.relpath(library, root))
        return Path(library)


def _reuse(root: Path, name: str, kind: str, load: bool = True) -> tuple[CompileResult, Kernel | None] | None:
    """The earlier build in `root` (loaded if it succeeded), or None if there is none or it
    cannot be loaded any more (its library gone, or a library it links to moved with the
    cache: the proxy builds link to the binding module by path): then it is rebuilt."""
    marker = root / "RESULT.json"
    if not marker.is_file():
        return None
    try:
        prev = json.loads(marker.read_text())
    except ValueError:
        return None
    cached = CompileResult(ok=prev["ok"], seconds=0.0, log=prev["log"], cached=True, module=name,
                           build_dir=str(root), headers=prev.get("headers", ""),
                           library_rel=prev.get("library", "") if prev["ok"] else "",
                           tier=prev.get("tier", prev.get("headers", "")), fallback=prev.get("fallback", ""))
    if not prev["ok"]:
        return cached, None
    library = root / prev["library"]             # relative since BUILD_VERSION 5 (absolute before)
    if not library.is_file() or not has_objects(library, kind):
        return None                              # (the link audit reads the kernel's object file)
    if not load:
        return cached, None
    try:
        return cached, _load(str(library))
    except RuntimeError as e:                    # dlopen failed; a student's static initialiser
        if str(e).startswith("cannot load "):    # that throws is an error of the kernel, not this
            return None
        raise


def _walk_tiers(src: Source, key: str, attempt: Callable[[str], tuple[bool, str, str]],
                on_note: Note | None) -> Walk:
    """`grader.build.tiers.walk` for `src`, its decisions and timings kept in this cache."""
    lines = [(src.file_line(i), text) for i, text in enumerate(src.text.split("\n"), start=1)]
    return walk(src.kind, display_file(src.file), lines, key, attempt, on_note, cache_root())


def _build_tier(src: Source, cfg: Config, root: Path, name: str, tier: str) -> tuple[bool, str, str]:
    """One load_inline build in `root/<tier>`: (ok, raw log, library path)."""
    build = root / tier
    if build.exists():
        shutil.rmtree(build)
    build.mkdir(parents=True)
    try:
        return True, "", _run_load_inline(src, cfg, build, name, tier)
    except RuntimeError as e:
        (build / "build.log").write_text(str(e))
        return False, str(e), ""


def _load(library: str) -> Kernel:
    return Kernel(library=library, address=_dispatch().open_kernel(library))


# ---- compile only (no GPU, no linking): `make check-compile` -------------------------

def _nvcc() -> str:
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    candidates = [os.path.join(home, "bin", "nvcc")] if home else []
    candidates += [shutil.which("nvcc") or "", "/usr/local/cuda/bin/nvcc"]
    for path in candidates:
        if path and os.path.isfile(path):
            return path
    raise FileNotFoundError("nvcc not found: install the CUDA toolkit or set CUDA_HOME")


def _compile_only_cmd(src: Source, cfg: Config, path: Path, tier: str) -> list[str]:
    import sysconfig

    from torch.utils.cpp_extension import include_paths
    args = _build_args(src, cfg, tier, link=False)
    includes = [f"-I{p}" for p in args["includes"]]
    for p in include_paths() + [sysconfig.get_paths()["include"]]:
        includes += ["-isystem", p]
    common = ["-DTORCH_API_INCLUDE_EXTENSION_H", "-DTORCH_EXTENSION_NAME=check", "-std=c++20"]
    if src.kind == "cuda":
        # searched last: a stand-in is used only where torch and the CUDA toolkit lack the
        # header (a CPU wheel, a toolkit without cuBLAS/cuSPARSE/cuDNN; grader/build/prelude_cpu_wheel/)
        stand_ins = ["-Xcompiler", "-idirafter", "-Xcompiler", str(CPU_WHEEL_PRELUDE)]
        return [_nvcc(), "-c", str(path), "-o", os.devnull, *common, *includes, *stand_ins,
                *args["cuda_flags"], "-Xcompiler", "-fPIC"]
    return ["c++", "-fsyntax-only", str(path), *common, *includes, *args["cflags"], "-fPIC"]


def _stand_ins_in_use() -> list[str]:
    """The CUDA library headers this machine's toolkit lacks (the stand-ins declare them)."""
    home = Path(_nvcc()).resolve().parent.parent
    dirs = [home / "include", *home.glob("targets/*/include")]
    return sorted(p.name for p in CPU_WHEEL_PRELUDE.glob("*.h") if not any((d / p.name).is_file() for d in dirs))


def _stand_in_hint(log: str) -> str:
    """A line for an error that may come from a stand-in declaring less than the library."""
    missing = _stand_ins_in_use()
    prefixes = {h: re.sub(r"(_v2|Dn|_common|_api)?\.h$", "", h) for h in missing}
    named = [h for h, prefix in prefixes.items() if re.search(rf"\b{prefix}\w*", log, re.IGNORECASE)]
    if not named:
        return ""
    return (f"note: this machine's CUDA toolkit has no {', '.join(named)}; the grader's stand-in declares only "
            "what torch's headers use, so an error about that library may not happen where it is installed")


def compile_only(src: Source, cfg: Config, on_note: Note | None = None) -> CompileResult:
    """Compile `src` without linking or loading it: for machines without a GPU (nvcc
    only). The same header tiers and fallback lines as a real build (`on_note`), and
    errors mapped to the student's file like a real build's."""
    import subprocess
    import tempfile
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="check-compile-") as tmp:
        path = Path(tmp) / ("kernel.cu" if src.kind == "cuda" else "kernel.cpp")
        path.write_text(annotate(src))

        def attempt(tier: str) -> tuple[bool, str, str]:
            try:
                proc = subprocess.run(_compile_only_cmd(src, cfg, path, tier), capture_output=True,
                                      text=True, timeout=cfg.timeout_compile)
            except subprocess.TimeoutExpired:
                raise Stop(f"the compiler ran longer than {cfg.timeout_compile:g} s") from None
            return proc.returncode == 0, proc.stdout + proc.stderr, ""
        walk = _walk_tiers(src, source_hash(src, cfg), attempt, on_note)
    log = "" if walk.ok else echo_source(trim_log(walk.log, display_file(src.file)), src)
    hint = _stand_in_hint(log) if not walk.ok and src.kind == "cuda" else ""
    return CompileResult(ok=walk.ok, seconds=round(time.perf_counter() - t0, 2), log=log + ("\n" + hint if hint else ""),
                         headers=walk.tier if walk.ok else "", tier=walk.tier, fallback=walk.fallback)
