"""Third-party style: a pybind-era CUDA extension in the manner of the PyTorch C++/CUDA
extension tutorial (CHECK_INPUT macros, AT_DISPATCH_FLOATING_TYPES, packed_accessor32
with RestrictPtrTraits, one kernel per step on the default stream; see MANIFEST.toml).
Written here for the grader's tests; licence: the project's."""

_CUDA_SRC = r"""
#include <torch/extension.h>

#include <cuda.h>
#include <cuda_runtime.h>

#include <vector>

#define CHECK_CUDA(x) TORCH_CHECK(x.device().is_cuda(), #x " must be a CUDA tensor")
#define CHECK_CONTIGUOUS(x) TORCH_CHECK(x.is_contiguous(), #x " must be contiguous")
#define CHECK_INPUT(x) CHECK_CUDA(x); CHECK_CONTIGUOUS(x)

namespace {
template <typename scalar_t>
__global__ void attention_scores_kernel(
    const torch::PackedTensorAccessor32<scalar_t, 4, torch::RestrictPtrTraits> query,
    const torch::PackedTensorAccessor32<scalar_t, 4, torch::RestrictPtrTraits> key,
    torch::PackedTensorAccessor32<scalar_t, 4, torch::RestrictPtrTraits> scores,
    const scalar_t scale) {
  const int n = blockIdx.z / query.size(1);
  const int h = blockIdx.z % query.size(1);
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < query.size(2) && col < key.size(2)) {
    scalar_t dot = 0;
    for (int c = 0; c < query.size(3); ++c) {
      dot += query[n][h][row][c] * key[n][h][col][c];
    }
    scores[n][h][row][col] = dot * scale;
  }
}

template <typename scalar_t>
__global__ void attention_softmax_kernel(
    torch::PackedTensorAccessor32<scalar_t, 4, torch::RestrictPtrTraits> scores) {
  const int heads = scores.size(1), len = scores.size(2);
  const int index = blockIdx.x * blockDim.x + threadIdx.x;
  if (index < scores.size(0) * heads * len) {
    auto row = scores[index / (heads * len)][(index / len) % heads][index % len];
    scalar_t row_max = row[0];
    for (int j = 1; j < len; ++j) row_max = row[j] > row_max ? row[j] : row_max;
    scalar_t total = 0;
    for (int j = 0; j < len; ++j) {
      row[j] = exp(row[j] - row_max);
      total += row[j];
    }
    for (int j = 0; j < len; ++j) row[j] /= total;
  }
}

template <typename scalar_t>
__global__ void attention_values_kernel(
    const torch::PackedTensorAccessor32<scalar_t, 4, torch::RestrictPtrTraits> probs,
    const torch::PackedTensorAccessor32<scalar_t, 4, torch::RestrictPtrTraits> value,
    torch::PackedTensorAccessor32<scalar_t, 4, torch::RestrictPtrTraits> output) {
  const int n = blockIdx.z / value.size(1);
  const int h = blockIdx.z % value.size(1);
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < probs.size(2) && c < value.size(3)) {
    scalar_t acc = 0;
    for (int j = 0; j < value.size(2); ++j) {
      acc += probs[n][h][row][j] * value[n][h][j][c];
    }
    output[n][h][row][c] = acc;
  }
}
} // namespace

std::vector<torch::Tensor> attention_cuda_forward(torch::Tensor query, torch::Tensor key, torch::Tensor value) {
  const auto batch_size = query.size(0);
  const auto heads = query.size(1);
  const auto seq_len = query.size(2);
  const auto head_dim = query.size(3);

  auto scores = torch::empty({batch_size, heads, seq_len, seq_len}, query.options());
  auto output = torch::zeros_like(query);

  const dim3 threads(16, 16);
  const dim3 score_blocks((seq_len + 15) / 16, (seq_len + 15) / 16, batch_size * heads);
  const dim3 value_blocks((head_dim + 15) / 16, (seq_len + 15) / 16, batch_size * heads);
  const int rows = batch_size * heads * seq_len;

  AT_DISPATCH_FLOATING_TYPES(query.scalar_type(), "attention_forward_cuda", ([&] {
    attention_scores_kernel<scalar_t><<<score_blocks, threads>>>(
        query.packed_accessor32<scalar_t, 4, torch::RestrictPtrTraits>(),
        key.packed_accessor32<scalar_t, 4, torch::RestrictPtrTraits>(),
        scores.packed_accessor32<scalar_t, 4, torch::RestrictPtrTraits>(),
        static_cast<scalar_t>(1.0 / std::sqrt(static_cast<double>(head_dim))));
    attention_softmax_kernel<scalar_t><<<(rows + 255) / 256, 256>>>(
        scores.packed_accessor32<scalar_t, 4, torch::RestrictPtrTraits>());
    attention_values_kernel<scalar_t><<<value_blocks, threads>>>(
        scores.packed_accessor32<scalar_t, 4, torch::RestrictPtrTraits>(),
        value.packed_accessor32<scalar_t, 4, torch::RestrictPtrTraits>(),
        output.packed_accessor32<scalar_t, 4, torch::RestrictPtrTraits>());
  }));

  return {output, scores};
}

std::vector<torch::Tensor> attention_forward(torch::Tensor query, torch::Tensor key, torch::Tensor value) {
  CHECK_INPUT(query);
  CHECK_INPUT(key);
  CHECK_INPUT(value);
  return attention_cuda_forward(query, key, value);
}

// ---- glue: the grader's entry point (instead of the PYBIND11_MODULE block) ----
torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
  return attention_forward(q, k, v)[0];
}
"""
