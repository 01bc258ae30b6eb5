"""Third-party style: a whole 2018-era PyTorch CUDA extension pasted as it was (ATen.h,
AT_ASSERTM(x.type().is_cuda()) checks, tensor.data<scalar_t>(), a std::vector return
and its PYBIND11_MODULE block; see MANIFEST.toml). The binding block needs pybind11,
so only the full torch headers compile it. Written here for the grader's tests;
licence: the project's."""

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/ATen.h>

#include <cuda.h>
#include <cuda_runtime.h>

#include <vector>

// CUDA part: one thread per query row, two passes over the keys (max, then exp-sum and
// the weighted values), the output normalised at the end.
template <typename scalar_t>
__global__ void attention_cuda_forward_kernel(
    const scalar_t* __restrict__ query,
    const scalar_t* __restrict__ key,
    const scalar_t* __restrict__ value,
    scalar_t* __restrict__ output,
    size_t rows,
    size_t seq_len,
    size_t head_dim,
    scalar_t scale) {
  const size_t row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    const size_t head = row / seq_len;
    const scalar_t* q_row = query + row * head_dim;
    const scalar_t* k_head = key + head * seq_len * head_dim;
    const scalar_t* v_head = value + head * seq_len * head_dim;
    scalar_t* o_row = output + row * head_dim;

    scalar_t max_score = -INFINITY;
    for (size_t j = 0; j < seq_len; ++j) {
      scalar_t score = 0;
      for (size_t c = 0; c < head_dim; ++c) score += q_row[c] * k_head[j * head_dim + c];
      score *= scale;
      if (score > max_score) max_score = score;
    }
    scalar_t denominator = 0;
    for (size_t j = 0; j < seq_len; ++j) {
      scalar_t score = 0;
      for (size_t c = 0; c < head_dim; ++c) score += q_row[c] * k_head[j * head_dim + c];
      const scalar_t weight = exp(score * scale - max_score);
      denominator += weight;
      for (size_t c = 0; c < head_dim; ++c) o_row[c] += weight * v_head[j * head_dim + c];
    }
    for (size_t c = 0; c < head_dim; ++c) o_row[c] /= denominator;
  }
}

std::vector<at::Tensor> attention_cuda_forward(at::Tensor query, at::Tensor key, at::Tensor value) {
  auto output = at::zeros_like(query);
  const auto seq_len = query.size(2);
  const auto head_dim = query.size(3);
  const auto rows = query.size(0) * query.size(1) * seq_len;

  const int threads = 128;
  const int blocks = (rows + threads - 1) / threads;

  AT_DISPATCH_FLOATING_TYPES(query.scalar_type(), "attention_forward_cuda", ([&] {
    attention_cuda_forward_kernel<scalar_t><<<blocks, threads>>>(
        query.data<scalar_t>(),
        key.data<scalar_t>(),
        value.data<scalar_t>(),
        output.data<scalar_t>(),
        rows,
        seq_len,
        head_dim,
        static_cast<scalar_t>(1.0 / sqrt(static_cast<double>(head_dim))));
  }));

  return {output};
}

// C++ interface

#define CHECK_CUDA(x) AT_ASSERTM(x.type().is_cuda(), #x " must be a CUDA tensor")
#define CHECK_CONTIGUOUS(x) AT_ASSERTM(x.is_contiguous(), #x " must be contiguous")
#define CHECK_INPUT(x) CHECK_CUDA(x); CHECK_CONTIGUOUS(x)

std::vector<at::Tensor> attention_forward(at::Tensor query, at::Tensor key, at::Tensor value) {
  CHECK_INPUT(query);
  CHECK_INPUT(key);
  CHECK_INPUT(value);
  return attention_cuda_forward(query, key, value);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("forward", &attention_forward, "Attention forward (CUDA)");
}

// ---- glue: the grader's entry point ----
torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
  return attention_forward(q, k, v)[0];
}
"""
