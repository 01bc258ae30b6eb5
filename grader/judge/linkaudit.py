"""Link-time audit of a built kernel library: what can it call?

The static scan (`integrity.scan`) reads the source, and a source can hide a call from a
reader (macros, pasted names, `extern "C"` declarations of anything). The built library
cannot: every function it calls outside itself is an undefined symbol of its dynamic
symbol table. `audit_library` parses the ELF file itself (no tool runs on the untrusted
bytes), demangles the names with `c++filt`, and sorts each symbol:

- allowed: the tensor API the proxy and lean headers expose (c10::, at:: allocation and
  views), the C and C++ runtimes, libm, OpenMP, the CUDA runtime;
- strict (verdict `cheat_suspected`), what can only be cheating or an attack on the
  grader: the Python C API, dlopen/dlsym, BLAS/LAPACK/oneDNN, cuBLAS/cuDNN, run-time
  compilation, ATen's compute entry points (`at::native::`, `at::cpu::`, redispatch,
  `at::_ops::<compute op>`), torch's thread-count / SDP-backend / TF32 setters, files,
  processes, sockets, the environment, raw `syscall` instructions in its code;
- warning, for a person to look at: anything else outside the allowlist (own threads,
  OpenMP thread settings, extra CUDA streams, unusual libraries).
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import struct
import subprocess
import tempfile

from ..build.compile import KERNEL_OBJECT, has_objects  # noqa: F401 - the build's own, re-exported
from .integrity import ALLOWED_OPS, STRICT, STRICT_OPS, WARNING, Flag


class ElfError(Exception):
    """Not an ELF shared library this audit can read."""


_SYM_SIZE, _DYN_SIZE = 24, 16                 # Elf64_Sym, Elf64_Dyn


def _sections(data: bytes, want_type: int) -> list[tuple]:
    """The section headers of an ELF64 little-endian file of type `want_type` (ET_REL 1,
    ET_DYN 3), read as hostile input: extended section numbering (e_shnum 0, the count in
    section 0's sh_size, as an object of 65 536 sections has) is followed, and every header
    must lie inside the file."""
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ElfError("not a 64-bit little-endian ELF file")
    e_type, = struct.unpack_from("<H", data, 0x10)
    if e_type != want_type:
        raise ElfError(f"ELF type {e_type}, not {want_type}")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, _ = struct.unpack_from("<HHH", data, 0x3A)
    if shentsize != 64 or shoff <= 0 or shoff + 64 > len(data):
        raise ElfError("bad section headers")
    if shnum == 0:                                    # extended numbering
        shnum = struct.unpack_from("<IIQQQQIIQQ", data, shoff)[5]
    if shnum <= 0 or shoff + shnum * 64 > len(data):
        raise ElfError("truncated section headers")
    return [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * 64) for i in range(shnum)]


def _strtab(data: bytes, sections: list[tuple], link: int) -> bytes:
    _, _, _, _, off, size, *_ = sections[link]
    return data[off:off + size]


def _cstr(table: bytes, off: int) -> str:
    end = table.find(b"\0", off)
    return table[off:end if end >= 0 else len(table)].decode("utf-8", "replace")


def _symbols(data: bytes, sections: list[tuple], sh_type: int):
    """(name, info, other, shndx) of every symbol in the sections of type `sh_type`, the
    version suffix cut off (`open@GLIBC_2.2.5` is `open`: a `.symver` alias calls the same)."""
    for _, t, _, _, off, size, link, _, _, entsize in sections:
        if t != sh_type:
            continue
        if entsize != _SYM_SIZE or off + size > len(data) or link >= len(sections):
            raise ElfError("bad symbol table")
        table = _strtab(data, sections, link)
        for i in range(1, size // _SYM_SIZE):
            name, info, other, shndx, _, _ = struct.unpack_from("<IBBHQQ", data, off + i * _SYM_SIZE)
            text = _cstr(table, name)
            if text:
                yield text.split("@")[0], info, other, shndx


def undefined_symbols(data: bytes) -> tuple[list[str], list[str]]:
    """(undefined dynamic symbols, DT_NEEDED libraries) of an ELF64 little-endian shared library."""
    try:
        sections = _sections(data, 3)
        if not any(s[1] == 11 for s in sections):
            raise ElfError("no dynamic symbol table")
        undefined = [n for n, _, _, shndx in _symbols(data, sections, 11) if shndx == 0]   # SHN_UNDEF
        needed = []
        for _, t, _, _, off, size, link, _, _, entsize in sections:
            if t != 6:                                            # SHT_DYNAMIC
                continue
            if entsize != _DYN_SIZE or off + size > len(data) or link >= len(sections):
                raise ElfError("bad dynamic section")
            table = _strtab(data, sections, link)
            for i in range(size // _DYN_SIZE):
                tag, val = struct.unpack_from("<qQ", data, off + i * _DYN_SIZE)
                if tag == 1:                                      # DT_NEEDED
                    needed.append(_cstr(table, val))
                elif tag == 0:
                    break
    except (struct.error, IndexError):
        raise ElfError("truncated ELF file") from None
    return sorted(set(undefined)), needed


def object_symbols(data: bytes) -> tuple[set[str], set[str]]:
    """(undefined, exported) symbol names of an ELF64 little-endian relocatable object (its
    .symtab): what one translation unit calls, and the global, default-visibility names it
    defines (what can satisfy another object's call, or stand in for a libc function)."""
    try:
        sections = _sections(data, 1)
        if not any(s[1] == 2 for s in sections):
            raise ElfError("no symbol table")
        undefined, exported = set(), set()
        for name, info, other, shndx in _symbols(data, sections, 2):     # SHT_SYMTAB
            if shndx == 0:
                undefined.add(name)
            elif info >> 4 in (1, 2) and other & 3 == 0:                 # GLOBAL/WEAK, DEFAULT
                exported.add(name)
    except (struct.error, IndexError):
        raise ElfError("truncated object file") from None
    return undefined, exported


def demangle(names: list[str]) -> dict[str, str]:
    """mangled -> demangled (c++filt; names unchanged where it is missing). A c++filt that
    fails, runs past its limit or answers with another number of lines raises ElfError: a
    crafted name that crashes the demangler must not leave every name mangled, matching no
    rule (the audit fails closed)."""
    tool = shutil.which("c++filt")
    if not tool or not names:
        return {n: n for n in names}
    try:
        proc = subprocess.run([tool], input="\n".join(names) + "\n", capture_output=True, text=True, timeout=60,
                              errors="replace")
    except subprocess.TimeoutExpired:
        raise ElfError("c++filt did not finish demangling its symbol names in 60 s") from None
    out = proc.stdout.splitlines()
    if proc.returncode != 0 or len(out) != len(names):
        raise ElfError(f"c++filt failed on its symbol names (exit {proc.returncode}, {len(out)} of {len(names)} names)")
    return dict(zip(names, out))


# ---- the rules: (code, tier, regex on the demangled name, what it means) ------------------

_SETTERS = (r"at::set_num_threads|at::set_num_interop_threads|at::Context::set(SDP|UserEnabled|AllowTF32|"
            r"AllowFP16|AllowBF16|Float32MatmulPrecision|FlushDenormal|Benchmark|Deterministic|SDPUse|"
            r"ROCmFA|LinalgPreferredBackend|BlasPreferredBackend|QEngine)\w*|c10::set_\w*threads")
RULES = [
    ("python_api", STRICT, r"^_?Py[A-Z_]\w*$|^_Py\w+$|^pybind11::",
     "uses the Python C API (the grader's own process)"),
    ("dynamic_loading", STRICT, r"^(dlopen|dlsym|dlvsym|dlmopen|dlinfo|_dl_\w+|dladdr|dladdr1|dl_iterate_phdr|"
     r"_r_debug|__libc_stack_end|__libc_dlopen_mode|__libc_dlsym)$",
     "loads code at run time"),
    ("blas", STRICT, r"^(cblas_\w+|[sdcz](gemm|gemv|ger|syrk|syr2k|symm|trmm|trsm|dot|axpy|scal|copy|swap|"
     r"nrm2|asum)_?|[sdcz](gesv|getrf|getrs|potrf|potrs|gels|geqrf|syev|gesdd)_|mkl_\w+|MKL_\w+|dnnl_\w+|"
     r"mkldnn_\w+|LAPACKE_\w+|openblas_\w+|bli_\w+|xerbla_?)$",
     "calls a BLAS / LAPACK / oneDNN routine instead of computing"),
    ("cublas", STRICT, r"^(cublas|cublasLt|cudnn|cusparse|cusolver|cufft)\w*|at::cuda::blas::|"
     r"at::cuda::getCurrentCUDA(Blas|BlasLt|Sparse|Solver)\w*Handle",
     "calls a vendor math library (cuBLAS / cuDNN / cuSPARSE / cuFFT)"),
    ("runtime_compile", STRICT, r"^(nvrtc\w+|cuModule\w+|cuLink\w+|cuLibrary\w+|cudaLibrary\w+)$",
     "compiles or loads GPU code at run time"),
    ("aten_compute", STRICT, r"^at::(native|cpu|cuda::native|meta|compositeexplicitautograd|"
     r"compositeimplicitautograd|redispatch)::|^at::_ops::\w+::redispatch",
     "calls ATen's compute kernels directly"),
    ("dispatcher", STRICT, r"^c10::(Dispatcher|OperatorHandle|TypedOperatorHandle|impl::OperatorEntry|"
     r"BoxedKernel|KernelFunction|OperatorName)::|^c10::impl::(tls_set_dispatch_key_\w+|"
     r"_force_tls_local_dispatch_key_set|tls_local_dispatch_key_set|ExcludeDispatchKeyGuard|"
     r"IncludeDispatchKeyGuard|TorchDispatchModeTLS|PythonDispatcherTLS|PythonTorchFunctionTLS)\b|"
     r"^c10::(SetCPUAllocator|SetAllocator|SetCPUCachingAllocator)\b|^at::(RecordFunction|"
     r"addGlobalCallback|addThreadLocalCallback|removeCallback|clearCallbacks|clearGlobalCallbacks|"
     r"clearThreadLocalCallbacks|enableRecordFunction)\b",
     "reaches torch's operator dispatcher, its dispatch keys, its allocators or its op observers itself "
     "(an operator called by name, unseen by the operation audit)"),
    ("global_settings", STRICT, rf"^({_SETTERS})\b",
     "changes torch's global settings (threads, SDP backends, TF32: SDPA's speed depends on them)"),
    ("file_access", STRICT, r"^(open|open64|openat|openat64|creat|creat64|fopen|fopen64|freopen|freopen64|"
     r"fdopen|opendir|fdopendir|readdir|readdir64|scandir|scandir64|__xstat|__xstat64|__lxstat|__lxstat64|"
     r"__fxstatat|__fxstatat64|stat|stat64|lstat|lstat64|fstatat|fstatat64|statx|access|faccessat|euidaccess|"
     r"unlink|unlinkat|rename|renameat|renameat2|mkdir|mkdirat|rmdir|chmod|fchmodat|chown|lchown|fchownat|"
     r"symlink|symlinkat|link|linkat|readlink|readlinkat|truncate|truncate64|realpath|chdir|fchdir|chroot|"
     r"memfd_create|shm_open|mkstemp|mkstemp64|tmpfile|tmpnam|dup2|dup3|mkfifo|mkfifoat|mknod|mknodat|"
     r"__xmknod|__xmknodat|inotify_\w+|fanotify_\w+|name_to_handle_at|open_by_handle_at|"
     r"__open|__open64|__open_2|__open64_2|__openat_2|__openat64_2|__open_nocancel|_IO_fopen|_IO_file_open|"
     r"_IO_new_fopen|_IO_new_fdopen|__fopen_internal|__open64_nocancel|_IO_file_fopen|_IO_fdopen|glob|glob64|"
     r"nftw|nftw64|ftw|ftw64|fts_open|fts_read|getdents|getdents64|__getdents64)$|"
     r"^std::(__cxx11::)?basic_[io]?fstream|^std::(__cxx11::)?basic_filebuf|^std::filesystem::|"
     r"^std::__basic_file\b|^torch::jit::|^torch::serialize::|^torch::load\b|^caffe2::serialize::|"
     r"^at::(Refcounted)?MapAllocator\b",
     "opens or inspects files"),
    ("environment", STRICT, r"^(getenv|secure_getenv|__secure_getenv|__libc_secure_getenv|setenv|putenv|"
     r"unsetenv|clearenv|environ|__environ|_environ|getauxval|__getauxval)$|^c10::utils::\w*env\b",
     "reads or changes the environment"),
    ("process", STRICT, r"^(fork|vfork|_Fork|clone|clone3|execve|execv|execvp|execvpe|execl|execlp|execle|"
     r"fexecve|posix_spawn\w*|system|popen|kill|killpg|tgkill|tkill|ptrace|syscall|prctl|setrlimit|prlimit|"
     r"prlimit64|setuid|setgid|setresuid|setresgid|seteuid|setegid|unshare|setns|mount|umount|umount2|"
     r"process_vm_readv|process_vm_writev|personality|wordexp|_IO_popen|_IO_proc_open|execveat|__clone|"
     r"__clone3|forkpty|openpty|daemon)$",
     "starts processes or makes raw system calls"),
    ("network", STRICT, r"^(socket|socketpair|connect|bind|listen|accept|accept4|sendto|recvfrom|sendmsg|"
     r"recvmsg|send|recv|getaddrinfo|gethostbyname\w*|getsockopt|setsockopt|inet_\w+)$",
     "opens network connections"),
    ("own_threads", WARNING, r"^(pthread_create|thrd_create)$|^std::thread::_M_start_thread|"
     r"^at::(launch|intraop_launch|intraop_launch_future|launch_no_thread_state)$|^c10::(TaskThreadPool|"
     r"ThreadPool|TaskThreadPoolBase)::",
     "starts its own threads (left running, they would slow what is timed next)"),
    ("thread_settings", WARNING, r"^(omp_set_num_threads|omp_set_dynamic|omp_set_nested|"
     r"omp_set_max_active_levels|kmp_set_\w+|sched_setaffinity|pthread_setaffinity_np|setpriority|nice)$",
     "changes OpenMP or scheduler settings (shared with torch; SDPA is timed with torch's put back)"),
    ("extra_streams", WARNING, r"^(cudaStreamCreate\w*|cudaStreamBeginCapture\w*|cudaGraph\w+|cudaEventCreate\w*|"
     r"cudaEventRecord\w*|cudaEventElapsedTime)$|^(c10|at)::cuda::(getStreamFromPool|getStreamFromExternal|"
     r"setCurrentCUDAStream)\b",
     "creates its own CUDA streams, events or graphs (timing covers the current stream only)"),
    ("device_settings", WARNING, r"^(cudaDeviceSetLimit|cudaDeviceReset|cudaSetDevice|cudaDeviceSetCacheConfig|"
     r"cudaDeviceSetSharedMemConfig|cudaSetDeviceFlags|cudaCtxResetPersistingL2Cache)$",
     "changes device state"),
    ("raw_io", WARNING, r"^(read|write|pread|pread64|pwrite|pwrite64|readv|writev|mmap|mmap64|munmap|mprotect|"
     r"ioctl|fcntl|fcntl64|close|poll|select|epoll_\w+|pipe|pipe2)$",
     "uses raw file descriptors or memory mappings"),
]
_COMPILED_RULES = [(c, t, re.compile(p), m) for c, t, p, m in RULES]

# Allowed, no flag: the runtimes, libm, OpenMP, the CUDA runtime, the tensor API.
ALLOWED = re.compile(
    r"^(mem(cpy|move|set|cmp|chr)|str(len|cmp|ncmp|cpy|ncpy|chr|rchr|str|dup|error|error_r|tol|tod|tof)|"
    r"malloc|calloc|realloc|free|posix_memalign|aligned_alloc|memalign|abort|exit|_exit|atexit|__assert_fail|"
    r"__stack_chk_fail|__cxa_\w+|_Unwind_\w+|__gxx_personality_v0|__dso_handle|_ITM_\w+|__gmon_start__|"
    r"__tls_get_addr|__errno_location|printf|puts|putchar|fprintf|fputs|fputc|putc|fwrite|fflush|vfprintf|"
    r"vprintf|snprintf|sprintf|vsnprintf|vsprintf|sscanf|__isoc99_sscanf|__isoc23_sscanf|stderr|stdout|stdin|"
    r"__\w+_chk|qsort|bsearch|rand|rand_r|srand|random|srandom|time|clock|gettimeofday|clock_gettime|"
    r"nanosleep|usleep|sleep|sched_yield|sysconf|getpagesize|get_nprocs|raise|abs|labs|llabs|div|atoi|atof|"
    r"atol|strtol\w*|strtoul\w*|isnan|isinf|__isnan\w*|__isinf\w*|__finite\w*|localtime\w*|strftime|"
    r"pthread_(once|self|equal|mutex_\w+|cond_\w+|rwlock_\w+|key_\w+|getspecific|setspecific|join|detach|"
    r"attr_\w+|spin_\w+|barrier_\w+)|sem_\w+|__libc_single_threaded|__cxa_thread_atexit_impl|"
    r"(__)?(exp|exp2|exp10|expm1|log|log2|log10|log1p|sqrt|cbrt|rsqrt|pow|fabs|fmax|fmin|floor|ceil|round|"
    r"lround|llround|rint|lrint|nearbyint|trunc|tanh|sinh|cosh|erf|erfc|sin|cos|tan|asin|acos|atan|atan2|"
    r"sincos|frexp|ldexp|scalbn|fma|fmod|remainder|modf|hypot|nan|copysign|lgamma|tgamma)(f|l)?(_finite)?|"
    r"__dynamic_cast|__cxa_\w+|__popcountdi2|__udivti3|__divti3|__umodti3|__modti3|"
    r"omp_get_\w+|omp_in_parallel|omp_init_\w+|omp_set_lock|omp_unset_lock|omp_destroy_\w+|omp_test_\w+|"
    r"GOMP_\w+|__kmpc_\w+|cuda\w+|__cuda\w+|__nv\w+|curand\w*|__fatbinwrap\w*|"
    r"grader_proxy_\w+)$"
    r"|^(std::|__gnu_cxx::|__cxxabiv1::|operator new|operator delete|typeinfo |vtable for |VTT for |"
    r"guard variable |construction vtable |non-virtual thunk|virtual thunk|transaction clone)")

# torch's C++ API, allowed by name: what a kernel needs of it (allocation, shapes and strides,
# data pointers, the errors TORCH_CHECK raises, at::parallel_for's thread helpers, the current
# CUDA stream and device), measured: the undefined torch symbols of the references, the
# third-party corpus and the known-good submissions. Any other c10::/at::/torch:: function is
# `torch_internals` (a warning: a person looks), so that a route to torch's compute no rule
# names yet is seen instead of allowed by its namespace. ATen operators (at::_ops::<op>) are
# sorted by operator before this (`classify`).
TENSOR_API = re.compile(
    r"^at::(TensorBase|Tensor)::(?!(_?backward|register_hook|_register_hook|retain_grad|set_data|_fw_grad|"
    r"_set_fw_grad)\b)|^at::(TensorMaker|TensorOptions|OptionalTensorRef|TensorRef)::|"
    r"^at::(get_num_threads|get_thread_num|in_parallel_region|init_num_threads|get_num_interop_threads|"
    r"internal::(set_thread_num|invoke_parallel|_parallel_run|lazy_init_num_threads))\b|"
    r"^c10::(ParallelGuard|Error|NotImplementedError|ValueError|TypeError|IndexError|LinAlgError|"
    r"OutOfMemoryError|EnforceFiniteError|Warning|WarningHandler|WarningUtils|SourceLocation|"
    r"SymInt|SymBool|SymFloat|SymNode\w*|SymbolicShapeMeta|TensorImpl|StorageImpl|Storage|"
    r"UndefinedTensorImpl|AutogradMetaInterface|Scalar|TensorOptions|Device|DeviceGuard|OptionalDeviceGuard|"
    r"Stream|StreamGuard|DataPtr|Allocator|InefficientStdFunctionContext|intrusive_ptr|weak_intrusive_ptr|"
    r"IValue|ivalue|TypeMeta|Half|BFloat16|Float8_\w+|DispatchKeySet|Symbol|MaybeOwned|ArrayRef|"
    r"detail|cow|impl::(SizesAndStrides|VirtualGuardImpl|device_guard_impl_registry|getGlobalPyInterpreter|"
    r"PyInterpreter|cow|GenericList|GenericDict))::|"
    r"^c10::(warn|demangle|demangle_type|get_backtrace|ThrowEnforceNotMet|ThrowEnforceFiniteNotMet|toString|"
    r"str|GetAllocator|GetCPUAllocator|typeMetaDatas|_str_wrapper|SetUpTypeMetaData)\b|"
    r"^caffe2::(TypeMeta|detail)::|"
    r"^(c10|at)::cuda::(getCurrentCUDAStream|getDefaultCUDAStream|c10_cuda_check_implementation|current_device|"
    r"device_count|device_count_ensure_non_zero|set_device|GetDevice|SetDevice|MaybeSetDevice|ExchangeDevice|"
    r"CUDAStream|warning_state|getDeviceIndexWithPrimaryContext|CUDAKernelLaunchRegistry|get_cuda_check_suffix|"
    r"c10_retrieve_device_side_assertion_info|getCurrentDeviceProperties|getDeviceProperties|warp_size|"
    r"CUDACachingAllocator::(raw_alloc|raw_alloc_with_stream|raw_delete|get)|getCUDADeviceAllocator|"
    r"detail|impl)\b")
_OPS = re.compile(r"^at::_ops::(\w+)::(call|redispatch)\(")


def qualified(name: str) -> str:
    """The function's qualified name in a demangled symbol: template arguments, the
    parameter list and a template function's return type taken away
    ("float* at::TensorBase::data_ptr<float>() const" -> "at::TensorBase::data_ptr")."""
    out, depth = [], 0
    for ch in name.split("(")[0] if not name.startswith(("operator", "typeinfo", "vtable", "VTT",
                                                         "guard variable", "construction vtable")) else name:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    text = "".join(out).strip()
    return text.split(" ")[-1] if " " in text and not text.startswith(("operator", "typeinfo", "vtable",
                                                                        "VTT", "guard", "construction")) else text


def classify(name: str) -> tuple[str, str, str] | None:
    """(code, tier, meaning) of one demangled symbol, None when allowed."""
    full, name = name, qualified(name)
    for code, tier, pattern, meaning in _COMPILED_RULES:
        if pattern.search(name):
            return code, tier, meaning
    m = _OPS.match(full) or _OPS.match(name + "(")
    if m:
        # at::_ops::<op>_<overload>: try every prefix at an underscore ("empty_memory_format"
        # is empty's overload, "fill__Scalar" fill_'s)
        parts = m[1].split("_")
        candidates = ["_".join(parts[:i]) for i in range(1, len(parts) + 1)]
        if any(c and STRICT_OPS.match(f"aten.{c}") for c in candidates):
            return "aten_compute", STRICT, "calls an ATen compute operation"
        if any(c in ALLOWED_OPS for c in candidates):
            return None
        return "aten_ops", WARNING, "calls an ATen operation other than allocation, views and copies"
    if ALLOWED.search(name) or TENSOR_API.search(name):
        return None
    if name.startswith(("c10::", "at::", "torch::", "caffe2::")):
        return ("torch_internals", WARNING, "calls torch's C++ functions beyond the tensor API a kernel needs "
                "(allocation, shapes, data pointers, errors, the current stream): what for?")
    return "unlisted_symbol", WARNING, "calls a function outside the grader's allowlist"


# ---- machine code: raw system calls -------------------------------------------------------

# a syscall instruction whatever prefixes objdump prints before it (`rex.W syscall`, `ds
# syscall`, `data16 syscall`: each still makes the call)
_RAW_SYSCALL = re.compile(r"\t(?:[a-z][\w.]*\s+)*?(syscall|sysenter|int\s+\$0x80)\b")
DISASSEMBLY_TIMEOUT_S = 120
MAX_CODE_BYTES = 64 << 20      # a kernel's library has well under 10 MiB of code


class AuditIncomplete(Exception):
    """The machine-code audit could not finish (the message says why): never 'clean'."""


def raw_syscalls(data: bytes) -> int:
    """Number of syscall/sysenter/int 0x80 instructions in the library's code (objdump);
    0 where objdump is missing. objdump's output is streamed and counted line by line (a
    library of 400 MB of NOPs made a buffered run hold 4.6 GB); code over MAX_CODE_BYTES,
    a disassembly past its time limit or a failed objdump raise AuditIncomplete: an audit
    that did not finish fails closed. (A syscall hidden inside another instruction's
    immediate is not seen by any linear disassembly: the sandbox's seccomp filter refuses
    the calls a kernel has no business making, whatever instruction issues them.)"""
    import threading
    tool = shutil.which("objdump")
    if not tool:
        return 0
    code = _code_bytes(data)
    if code > MAX_CODE_BYTES:
        raise AuditIncomplete(f"{code >> 20} MiB of executable code (at most {MAX_CODE_BYTES >> 20} MiB "
                              "are disassembled)")
    with tempfile.NamedTemporaryFile(suffix=".so") as f:
        f.write(data)
        f.flush()
        proc = subprocess.Popen([tool, "-d", "--no-show-raw-insn", f.name], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True, errors="replace",
                                start_new_session=True)

        def stop() -> None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        timer = threading.Timer(DISASSEMBLY_TIMEOUT_S, stop)
        timer.start()
        n = 0
        try:
            for line in proc.stdout:
                if "sys" in line or "int" in line:
                    n += bool(_RAW_SYSCALL.search(line))
        finally:
            timer.cancel()
            proc.stdout.close()
            rc = proc.wait()
    if rc != 0:
        raise AuditIncomplete(f"objdump {'ran past ' + str(DISASSEMBLY_TIMEOUT_S) + ' s' if rc == -9 else f'failed (exit {rc})'}")
    return n


def _code_bytes(data: bytes) -> int:
    """Total size of the executable sections (SHF_EXECINSTR) of an ELF file; 0 when its
    section table cannot be read (the symbol audit has said so already)."""
    try:
        # Elf64_Shdr: name, type, flags, addr, offset, size, ...; SHT_NOBITS (8) holds no bytes
        return sum(sh[5] for sh in _sections(data, 3) if sh[2] & 0x4 and sh[1] != 8)
    except (ElfError, struct.error):
        return 0


# ---- what the toolchain and torch's headers bring ------------------------------------------

# A kernel links whatever the inline code of the headers it includes uses (pybind11's Python
# C API calls in the full tier), and whatever the toolchain adds by itself: a GPU image's own
# GCC links the static parts of libgomp and libstdc++ that a kernel's calls reach (an OpenMP
# loop: secure_getenv; std::cout, a TORCH_CHECK message built in a stream: fopen64, fdopen,
# open). Those symbols are measured once per machine, kind and header tier, from a kernel that
# does nothing but what kernels do (an OpenMP loop, a stream, a launch, messages through
# iostream, sstream and TORCH_CHECK, an exception), built in that tier alone with the
# submission's flags, and not held against a student: only what a kernel adds is (fopen or
# getenv of its own still show where the toolchain links libc dynamically, as gcc does). A
# pasted PYBIND11_MODULE block is left out of the build (compile.without_binding), so the
# Python C API its machinery would link is never excused: any such call is the kernel's own.
_BASELINE_INCLUDES = {
    ("cpp", "lean"): ["torch/extension.h"],
    ("cpp", "full"): ["torch/extension.h", "torch/python.h", "ATen/ATen.h"],
    ("cuda", "proxy"): ["torch/extension.h", "cuda_runtime.h", "ATen/cuda/CUDAContext.h", "c10/cuda/CUDAException.h"],
    ("cuda", "lean"): ["torch/extension.h", "cuda_runtime.h", "ATen/cuda/CUDAContext.h", "c10/cuda/CUDAException.h"],
    ("cuda", "full"): ["torch/extension.h", "torch/python.h", "ATen/ATen.h", "cuda.h", "cuda_runtime.h",
                       "ATen/cuda/CUDAContext.h", "c10/cuda/CUDAException.h", "c10/cuda/CUDAGuard.h"],
}
# what every kernel's host code may do: messages (iostream, a string stream, TORCH_CHECK with
# values), strings, vectors, an exception
_BASELINE_HOST = """
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>
static void baseline_messages(const torch::Tensor& q) {
    TORCH_CHECK(q.dim() == 4, "q must be (B, H, S, D), got ", q.dim(), " dims: ", q.sizes());
    if (q.numel() < 0) {
        std::ostringstream msg;
        msg << "empty " << q.numel() << " " << 1.5f << " " << q.options();
        std::cout << msg.str() << std::endl;
        std::cerr << std::to_string(q.size(0)) << std::endl;
        printf("%s\\n", msg.str().c_str());
        throw std::runtime_error(msg.str());
    }
}
"""
_BASELINE_BODY = {
    "cpp": _BASELINE_HOST + """
torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    baseline_messages(q);
    auto o = torch::empty_like(q);
    float* out = o.data_ptr<float>();
    const float* in = q.data_ptr<float>();
    std::vector<float> row(8);
    #pragma omp parallel for
    for (long i = 0; i < q.numel(); ++i) out[i] = std::exp(in[i]) + row[i % 8];
    return o;
}
""",
    "cuda": _BASELINE_HOST + """
__global__ void baseline_kernel(const float* in, float* out, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = expf(in[i]);
}
torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    TORCH_CHECK(q.is_cuda(), "q must be a CUDA tensor");
    baseline_messages(q);
    auto o = torch::empty_like(q);
    long n = q.numel();
    baseline_kernel<<<(unsigned)((n + 255) / 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        q.data_ptr<float>(), o.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) printf("%s\\n", cudaGetErrorString(err));
    return o;
}
""",
}
_BASELINES: dict = {}
_BASELINE_OBJECTS: dict = {}
# the object files torch's load_inline leaves beside the library it links, and the one each
# kind's source is compiled into (a build without it cannot be audited: it is built again)
OBJECT_FILES = ("main.o", "cuda.cuda.o")


def _baseline_key(kind: str, cfg, tier: str) -> tuple:
    return kind, tier, tuple(cfg.cpp_flags), tuple(cfg.cuda_flags), cfg.cuda_arch


def baseline_source(kind: str, tier: str) -> str:
    """The do-nothing kernel whose symbols `header_baseline` measures."""
    includes = "".join(f"#include <{h}>\n" for h in _BASELINE_INCLUDES[(kind, tier)])
    return includes + _BASELINE_BODY[kind]


def header_baseline(kind: str, cfg, tier: str = "full") -> frozenset:
    """Undefined symbols of the do-nothing kernel built in header tier `tier` (cached: built
    once per machine, seconds to ~1 min); empty if it cannot be built here, so nothing is
    excused."""
    key = _baseline_key(kind, cfg, tier)
    if key not in _BASELINES:
        from ..build.compile import build_in_tier
        from ..build.parse import Source
        text = baseline_source(kind, tier) if (kind, tier) in _BASELINE_INCLUDES else ""
        src = Source(kind=kind, text=text, file="toolchain_baseline",
                     line_map=tuple(range(1, text.count("\n") + 2)))
        symbols: frozenset = frozenset()
        objects: frozenset = frozenset()
        try:
            library = build_in_tier(src, cfg, tier) if text else None
            if library is not None:
                symbols = frozenset(undefined_symbols(library.read_bytes())[0])
                found: set[str] = set()
                for obj in OBJECT_FILES:
                    if (library.parent / obj).is_file():
                        found |= object_symbols((library.parent / obj).read_bytes())[0]
                objects = frozenset(found) if has_objects(library, kind) else frozenset()
        except Exception:  # noqa: BLE001 - no baseline: nothing is excused, flags stand
            symbols, objects = frozenset(), frozenset()
        _BASELINES[key] = symbols
        _BASELINE_OBJECTS[key] = objects
    return _BASELINES[key]


def baseline_objects(kind: str, cfg, tier: str = "full") -> frozenset:
    """Undefined symbols of the do-nothing kernel's object files (built with `header_baseline`)."""
    header_baseline(kind, cfg, tier)
    return _BASELINE_OBJECTS[_baseline_key(kind, cfg, tier)]


def _symbol_flags(undefined: list[str], where: str) -> list[Flag]:
    """One flag per category the symbols fall in, strict ones first."""
    try:
        names = demangle(undefined)
    except ElfError as e:
        return [Flag("unauditable", STRICT, f"{where}cannot be audited ({e})")]
    found: dict[tuple[str, str], list[str]] = {}
    meaning: dict[str, str] = {}
    for raw in undefined:
        hit = classify(names.get(raw, raw))
        if hit:
            code, tier, text = hit
            found.setdefault((code, tier), []).append(names.get(raw, raw).split("(")[0])
            meaning[code] = text
    flags = []
    for (code, tier), syms in sorted(found.items(), key=lambda kv: (kv[0][1] != STRICT, kv[0][0])):
        shown = ", ".join(sorted(set(syms))[:6]) + (f" (+{len(set(syms)) - 6} more)" if len(set(syms)) > 6 else "")
        flags.append(Flag(code, tier, f"{where}{meaning[code]}: {shown}"))
    return flags


def audit_objects(objects: list[bytes], src=None, baseline: frozenset = frozenset()) -> list[Flag]:
    """Flags of what the kernel's own compiled code calls: the undefined symbols of its
    object files (main.o, cuda.cuda.o), less what they define for each other and what the
    tier's baseline objects call. The library audit alone can be blind here: a toolchain that
    links static parts of libstdc++ into every library (a GPU image's GCC: fopen64, fdopen,
    open for iostream) puts those calls in the baseline library, and a kernel's own `open`
    would be excused with them. Its objects still name it. Every named category counts,
    warnings too (a kernel's own `write` is `raw_io` on every toolchain); the catch-all
    `unlisted_symbol` does not: an object's other undefined names (libgcc helpers, what the
    linker resolves inside the library) are no one's business."""
    where = f"{src.file}: the kernel's compiled code " if src is not None else "the kernel's compiled code "
    undefined: set[str] = set()
    exported: set[str] = set()
    for data in objects:
        try:
            u, d = object_symbols(data)
        except ElfError as e:
            return [Flag("unauditable", STRICT, f"{where}cannot be audited ({e})")]
        undefined |= u
        exported |= d
    calls = _symbol_flags(sorted(undefined - exported - baseline), where)
    # a C function of libc's name defined by the kernel (`extern "C" int open(...)`) is not its
    # own: the loader binds the library's calls to libc's first, so calling it calls libc's
    c_names = sorted(n for n in exported if not n.startswith("_Z"))
    defines = _symbol_flags(c_names, f"{where}defines a C function of libc's name; it ")
    return [f for f in merge_flags(calls, defines) if f.code not in ("unlisted_symbol", "torch_internals")]


def merge_flags(library: list[Flag], objects: list[Flag]) -> list[Flag]:
    """The library's flags, and each object flag of a category the library did not show."""
    seen = {f.code for f in library}
    return library + [f for f in objects if f.code not in seen]


# what a library calls to run on more than one thread: OpenMP (GOMP_/omp_/__kmpc_), pthreads,
# std::thread, ATen's parallel_for/parallel_reduce (at::internal), TBB
THREAD_SYMBOLS = re.compile(r"^(GOMP_|omp_|__kmpc_|pthread_create|_ZNSt6thread|_ZN2at8internal|_ZN3tbb|_ZN2at\d+parallel)")


def starts_threads(data: bytes) -> bool | None:
    """Whether a built library (bytes of a .so) can start threads: an undefined symbol of
    THREAD_SYMBOLS. None when it cannot be read (then nothing is concluded from it)."""
    try:
        undefined, _ = undefined_symbols(data)
    except ElfError:
        return None
    return any(THREAD_SYMBOLS.match(u) for u in undefined)


def audit_library(data: bytes, src=None, baseline: frozenset = frozenset()) -> list[Flag]:
    """Flags of one built library (bytes of a .so); `src` (grader.build.parse.Source) names the file;
    symbols in `baseline` (what torch's headers bring by themselves) are not held against it."""
    where = f"{src.file}: the built library " if src is not None else "the built library "
    try:
        undefined, needed = undefined_symbols(data)
    except ElfError as e:
        return [Flag("unauditable", STRICT, f"{where}cannot be audited ({e})")]
    flags = _symbol_flags([u for u in undefined if u not in baseline], where)
    libs = [n for n in needed if re.match(r"lib(cublas|cudnn|cusparse|cusolver|cufft|mkl|dnnl|openblas|blas|"
                                          r"lapack|python\d)", n)]
    if libs:
        flags.append(Flag("linked_library", STRICT, f"{where}links against {', '.join(libs)}"))
    try:
        n = raw_syscalls(data)
    except AuditIncomplete as e:
        return flags + [Flag("unauditable", STRICT, f"{where}could not be audited for raw system calls ({e}): "
                             "a person must review it")]
    if n:
        flags.append(Flag("raw_syscall", STRICT, f"{where}contains {n} raw system call instruction(s) "
                          "(syscall/sysenter/int 0x80)"))
    return flags
