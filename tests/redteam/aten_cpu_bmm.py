"""Attack: computes with ATen's CPU kernels through their exported C++ entry points
(at::cpu::bmm, at::cpu::_softmax), declared by hand: no header, no `at::bmm(` for the
static scan, no dispatch for the operation audit to see.
Defence: the link audit lists the library's undefined symbols: at::cpu:: is ATen compute.
Expect: status=cheat_suspected; flags=strict:aten_compute
"""

_CPP_SRC = r"""
#include <torch/extension.h>
namespace at { namespace cpu {
at::Tensor bmm(const at::Tensor& self, const at::Tensor& mat2);
at::Tensor _softmax(const at::Tensor& self, int64_t dim, bool half_to_float);
}}

torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int64_t B = q.size(0), H = q.size(1), S = q.size(2), D = q.size(3);
    auto q3 = q.reshape({B * H, S, D}), k3 = k.reshape({B * H, S, D}), v3 = v.reshape({B * H, S, D});
    auto kt = k3.transpose(1, 2).contiguous();
    auto scores = at::cpu::bmm(q3, kt);
    float* s = scores.data_ptr<float>();
    const float scale = 1.0f / std::sqrt((float)D);
    for (int64_t i = 0; i < scores.numel(); ++i) s[i] *= scale;
    auto p = at::cpu::_softmax(scores, -1, false);
    return at::cpu::bmm(p, v3).reshape({B, H, S, D});
}
"""
