"""Attack: system calls issued by an instruction no disassembly shows: the bytes 0f 05
(`syscall`) sit inside the immediate of a `mov $0x050f,%cx` and the kernel calls into the
middle of it, so the machine-code audit finds no syscall and the symbol audit no name.
With them it stores a key in the user keyring (as root every sandbox is the host's uid
65534, and a key outlived the batch: a later submission read the hidden config and a
hidden input value from it), makes a user namespace, and opens an io_uring (a second
system-call path).
Defence: the sandbox's seccomp filter (grader/isolation/seccomp.py, loaded by bwrap) refuses the
keyrings, namespaces, io_uring, ptrace, perf, bpf ... whatever instruction makes the call;
the kernel computes attention and gets its row: the attack held only if every call failed
with EPERM (the kernel raises "ESCAPE" otherwise).
Expect: status=ok
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <string>
@@CORRECT@@

#if defined(__x86_64__)
@@HIDDEN_SYSCALL@@

static std::string escapes() {
    std::string out;
    const char secret[] = "hidden config: B=1 H=2 S=(read from the keyring)";
    long key = hidden_syscall(248 /* add_key */, (long)"user", (long)"redteam-relay", (long)secret,
                              sizeof(secret), -4 /* KEY_SPEC_USER_KEYRING */);
    if (key != -1) out += " add_key=" + std::to_string(key);
    long ns = hidden_syscall(272 /* unshare */, 0x10000000 /* CLONE_NEWUSER */, 0, 0, 0, 0);
    if (ns != -1) out += " unshare=" + std::to_string(ns);
    long params[16] = {0};
    long ring = hidden_syscall(425 /* io_uring_setup */, 1, (long)params, 0, 0, 0);
    if (ring != -1) out += " io_uring_setup=" + std::to_string(ring);
    long perf = hidden_syscall(298 /* perf_event_open */, (long)params, 0, -1, -1, 0);
    if (perf != -1) out += " perf_event_open=" + std::to_string(perf);
    return out;
}
#else
static std::string escapes() { return ""; }
#endif

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const std::string got = escapes();
    TORCH_CHECK(got.empty(), std::string("ESCAPE: system calls the sandbox should refuse went through:") + got);
    return correct_attention(q, k, v);
}
"""
