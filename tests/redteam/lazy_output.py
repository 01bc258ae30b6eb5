"""Attack: an output that computes itself when first read. Each call writes the first page of
its output, protects the rest (mprotect, found by an in-memory symbol lookup: no symbol for the
audit) and returns at once; a SIGSEGV handler computes the rest, in plain loops, the first time
anything reads it. The first read is the harness's copy of the output, which came after the
call's time was taken: the call reported a sliver of its work, the rest ran in the harness,
and the output the judge checks is complete and right. (The judge's clock charged that time
back and flagged it on a machine it called quiet; on one it called busy, it did neither.)
Defence: the harness takes every kernel's output inside the call's time (grader/judge/bench.py
`Rounds.round`): the work done on the first read is the call's, and the slowdown is the
kernel's real one. The bar is far from both sides: with its cost hidden the slowdown was
0.030-0.037 (S = 64 and 256, before the defence); honestly timed, its plain loops measure
5-15x SDPA on a quiet 2-core machine and 1.32x at S = 64 on a loaded CI run, whose 2-thread
SDPA suffers the load more than one thread of loops does (a bar of 2 failed there).
Expect: status=ok; slowdown_min=0.5
"""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <signal.h>
#include <sys/mman.h>
#include <cmath>
@@ELF_LOOKUP@@

typedef int (*ProtFn)(void*, size_t, int);
typedef int (*SigactFn)(int, const struct sigaction*, struct sigaction*);
static ProtFn prot_fn;
static SigactFn sigact_fn;

struct Lazy {
    at::Tensor q, k, v, buf;
    float* out = nullptr;
    char* lo = nullptr;          // the protected pages: [lo, hi)
    char* hi = nullptr;
    int64_t BH = 0, S = 0, D = 0;
    volatile bool pending = false;
};
static Lazy lazy;
static std::vector<float> scratch;

static void rows(const Lazy& j, int64_t r0, int64_t r1) {      // rows of every head, flattened
    const float *q = j.q.data_ptr<float>(), *k = j.k.data_ptr<float>(), *v = j.v.data_ptr<float>();
    const float scale = 1.0f / std::sqrt((float)j.D);
    for (int64_t row = r0; row < r1; ++row) {
        const int64_t h = row / j.S;
        float mx = -INFINITY, sum = 0.0f;
        for (int64_t c = 0; c < j.S; ++c) {
            float s = 0.0f;
            for (int64_t d = 0; d < j.D; ++d) s += q[row * j.D + d] * k[(h * j.S + c) * j.D + d];
            scratch[c] = s * scale;
            mx = scratch[c] > mx ? scratch[c] : mx;
        }
        for (int64_t c = 0; c < j.S; ++c) { scratch[c] = std::exp(scratch[c] - mx); sum += scratch[c]; }
        float* o = j.out + row * j.D;
        for (int64_t d = 0; d < j.D; ++d) o[d] = 0.0f;
        for (int64_t c = 0; c < j.S; ++c)
            for (int64_t d = 0; d < j.D; ++d) o[d] += scratch[c] / sum * v[(h * j.S + c) * j.D + d];
    }
}

static void on_fault(int, siginfo_t* info, void*) {
    char* at = (char*)info->si_addr;
    if (lazy.pending && at >= lazy.lo && at < lazy.hi) {
        prot_fn(lazy.lo, lazy.hi - lazy.lo, PROT_READ | PROT_WRITE);
        lazy.pending = false;
        rows(lazy, 0, lazy.BH * lazy.S);                 // the work the call's time left out
        return;
    }
    struct sigaction dfl = {};
    dfl.sa_handler = SIG_DFL;
    sigact_fn(SIGSEGV, &dfl, nullptr);                   // not ours: crash as it would have
}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    if (!prot_fn) {
        prot_fn = (ProtFn)rt_libc("mprotect");
        sigact_fn = (SigactFn)rt_libc("sigaction");
        struct sigaction sa = {};
        sa.sa_sigaction = on_fault;
        sa.sa_flags = SA_SIGINFO | SA_NODEFER;
        sigact_fn(SIGSEGV, &sa, nullptr);
    }
    if (lazy.pending) {                                  // the last output never read: finish it
        prot_fn(lazy.lo, lazy.hi - lazy.lo, PROT_READ | PROT_WRITE);
        lazy.pending = false;
        rows(lazy, 0, lazy.BH * lazy.S);
    }
    const int64_t B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3), n = B * H * S * D;
    lazy.q = q.contiguous(); lazy.k = k.contiguous(); lazy.v = v.contiguous();
    lazy.BH = B * H; lazy.S = S; lazy.D = D;
    scratch.resize(S);
    lazy.buf = torch::empty({n + 2048}, q.options());
    char* raw = (char*)lazy.buf.data_ptr<float>();
    const int64_t skip = (4096 - (int64_t)((uintptr_t)raw & 4095)) % 4096 / 4;   // floats to a page start
    lazy.out = lazy.buf.data_ptr<float>() + skip;
    lazy.lo = (char*)lazy.out + 4096;                    // the first page written now, the rest later
    lazy.hi = (char*)lazy.out + ((n * 4) & ~(int64_t)4095);
    auto out = lazy.buf.narrow(0, skip, n).view({B, H, S, D});
    if (lazy.hi <= lazy.lo) {                            // too small to protect: honest
        rows(lazy, 0, lazy.BH * S);
        return out;
    }
    rows(lazy, 0, 4096 / 4 / D);
    lazy.pending = true;
    prot_fn(lazy.lo, lazy.hi - lazy.lo, PROT_NONE);
    // the tail past the last whole page, written now
    rows(lazy, ((lazy.hi - (char*)lazy.out) / 4) / D, B * H * S);
    return out;
}
"""
