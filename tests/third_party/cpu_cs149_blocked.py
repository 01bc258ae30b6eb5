"""Third-party style: a course assignment's CPU attention (std::vector copies of the
tensors, 2D/4D read-write helpers, blocked matrix multiplies, torch::from_blob for the
result; see MANIFEST.toml). Its blocks cover only whole tiles: wrong at S = 333.
Written here for the grader's tests; licence: the project's."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <ATen/ATen.h>
#include <iostream>
#include <vector>
#include <cmath>

// ---- accessors over the flattened tensors ----
inline float twoDimRead(std::vector<float> &tensor, int &x, int &y, const int &sizeX) {
    return tensor[x * sizeX + y];
}

inline void twoDimWrite(std::vector<float> &tensor, int &x, int &y, const int &sizeX, float &val) {
    tensor[x * sizeX + y] = val;
}

inline float fourDimRead(std::vector<float> &tensor, int &x, int &y, int &z, int &b,
                         const int &sizeX, const int &sizeY, const int &sizeZ) {
    return tensor[x * sizeX * sizeY * sizeZ + y * sizeY * sizeZ + z * sizeZ + b];
}

inline void fourDimWrite(std::vector<float> &tensor, int &x, int &y, int &z, int &b,
                         const int &sizeX, const int &sizeY, const int &sizeZ, float &val) {
    tensor[x * sizeX * sizeY * sizeZ + y * sizeY * sizeZ + z * sizeZ + b] = val;
}

std::vector<float> formatTensor(torch::Tensor tensor) {
    tensor = tensor.flatten();
    tensor = tensor.contiguous();
    std::vector<float> vec(tensor.data_ptr<float>(), tensor.data_ptr<float>() + tensor.numel());
    return vec;
}

// ---- part 2: blocked matrix multiply and unfused softmax ----
#define TILE 16   // 16 x 16 floats per block: one KiB, fits L1 three times over

torch::Tensor myUnfusedAttentionBlocked(torch::Tensor QTensor, torch::Tensor KTensor, torch::Tensor VTensor,
                                        torch::Tensor QK_tTensor, int B, int H, int N, int d) {
    at::Tensor OTensor = at::zeros({B, H, N, d}, at::kFloat);
    std::vector<float> O = formatTensor(OTensor);
    std::vector<float> Q = formatTensor(QTensor);
    std::vector<float> K = formatTensor(KTensor);
    std::vector<float> V = formatTensor(VTensor);
    std::vector<float> QK_t = formatTensor(QK_tTensor);

    const int nTiles = N / TILE;      // tiles along the sequence
    const int dTiles = d / TILE;      // tiles along the head dimension
    const float scale = 1.0f / std::sqrt((float)d);

    for (int b = 0; b < B; b++) {
        for (int h = 0; h < H; h++) {
            // QK^t, one TILE x TILE block at a time
            for (int bi = 0; bi < nTiles; bi++) {
                for (int bj = 0; bj < nTiles; bj++) {
                    for (int bk = 0; bk < dTiles; bk++) {
                        for (int i = bi * TILE; i < (bi + 1) * TILE; i++) {
                            for (int j = bj * TILE; j < (bj + 1) * TILE; j++) {
                                float val = bk == 0 ? 0.0f : twoDimRead(QK_t, i, j, N);
                                for (int kk = bk * TILE; kk < (bk + 1) * TILE; kk++) {
                                    val += fourDimRead(Q, b, h, i, kk, H, N, d) * fourDimRead(K, b, h, j, kk, H, N, d);
                                }
                                twoDimWrite(QK_t, i, j, N, val);
                            }
                        }
                    }
                }
            }

            // softmax, one row at a time
            for (int i = 0; i < N; i++) {
                float mx = -INFINITY;
                for (int j = 0; j < N; j++) {
                    float s = twoDimRead(QK_t, i, j, N) * scale;
                    twoDimWrite(QK_t, i, j, N, s);
                    mx = std::max(mx, s);
                }
                float sum = 0.0f;
                for (int j = 0; j < N; j++) {
                    float e = std::exp(twoDimRead(QK_t, i, j, N) - mx);
                    twoDimWrite(QK_t, i, j, N, e);
                    sum += e;
                }
                for (int j = 0; j < N; j++) {
                    float p = twoDimRead(QK_t, i, j, N) / sum;
                    twoDimWrite(QK_t, i, j, N, p);
                }
            }

            // O = P V, blocked the same way
            for (int bi = 0; bi < nTiles; bi++) {
                for (int bk = 0; bk < nTiles; bk++) {
                    for (int bj = 0; bj < dTiles; bj++) {
                        for (int i = bi * TILE; i < (bi + 1) * TILE; i++) {
                            for (int j = bj * TILE; j < (bj + 1) * TILE; j++) {
                                float val = fourDimRead(O, b, h, i, j, H, N, d);
                                for (int kk = bk * TILE; kk < (bk + 1) * TILE; kk++) {
                                    val += twoDimRead(QK_t, i, kk, N) * fourDimRead(V, b, h, kk, j, H, N, d);
                                }
                                fourDimWrite(O, b, h, i, j, H, N, d, val);
                            }
                        }
                    }
                }
            }
        }
    }
    return torch::from_blob(O.data(), {B, H, N, d}, torch::TensorOptions().dtype(torch::kFloat32)).clone();
}

// ---- glue: the grader's entry point ----
torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int B = q.size(0), H = q.size(1), N = q.size(2), d = q.size(3);
    at::Tensor QK_t = at::zeros({N, N}, at::kFloat);
    return myUnfusedAttentionBlocked(q, k, v, QK_t, B, H, N, d);
}
"""
