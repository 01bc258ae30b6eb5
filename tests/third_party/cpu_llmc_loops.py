"""Third-party style: plain C++ loops, as in llm.c's CPU attention_forward (see MANIFEST.toml:
pre-softmax and softmax buffers, a -10000 seed for the running max, four passes per row).
Written here for the grader's tests; licence: the project's."""

_CPP_SRC = r"""
#include <torch/extension.h>
#include <math.h>
#include <vector>

// out, preatt, att: as in the CPU reference of a GPT trainer, for q, k, v of (B, NH, T, hs)
void attention_forward(float* out, float* preatt, float* att,
                       const float* q, const float* k, const float* v,
                       int B, int NH, int T, int hs) {
    float scale = 1.0 / sqrtf(hs);

    for (int b = 0; b < B; b++) {
        for (int h = 0; h < NH; h++) {
            for (int t = 0; t < T; t++) {
                const float* query_t = q + b * NH * T * hs + h * T * hs + t * hs;
                float* preatt_bht = preatt + b * NH * T * T + h * T * T + t * T;
                float* att_bht = att + b * NH * T * T + h * T * T + t * T;

                // pass 1: query . key for every key, and the largest value
                float maxval = -10000.0f; // TODO something better
                for (int t2 = 0; t2 < T; t2++) {
                    const float* key_t2 = k + b * NH * T * hs + h * T * hs + t2 * hs;
                    float val = 0.0f;
                    for (int i = 0; i < hs; i++) {
                        val += query_t[i] * key_t2[i];
                    }
                    val *= scale;
                    if (val > maxval) {
                        maxval = val;
                    }
                    preatt_bht[t2] = val;
                }

                // pass 2: exp and its sum (maxval only keeps exp from overflowing)
                float expsum = 0.0f;
                for (int t2 = 0; t2 < T; t2++) {
                    float expv = expf(preatt_bht[t2] - maxval);
                    expsum += expv;
                    att_bht[t2] = expv;
                }
                float expsum_inv = expsum == 0.0f ? 0.0f : 1.0f / expsum;

                // pass 3: normalize
                for (int t2 = 0; t2 < T; t2++) {
                    att_bht[t2] *= expsum_inv;
                }

                // pass 4: weighted sum of the values
                float* out_bht = out + b * NH * T * hs + h * T * hs + t * hs;
                for (int i = 0; i < hs; i++) { out_bht[i] = 0.0f; }
                for (int t2 = 0; t2 < T; t2++) {
                    const float* value_t2 = v + b * NH * T * hs + h * T * hs + t2 * hs;
                    float att_btht2 = att_bht[t2];
                    for (int i = 0; i < hs; i++) {
                        out_bht[i] += att_btht2 * value_t2[i];
                    }
                }
            }
        }
    }
}

// ---- glue: the grader's entry point ----
torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
    const int B = q.size(0), NH = q.size(1), T = q.size(2), hs = q.size(3);
    auto out = torch::empty_like(q);
    std::vector<float> preatt((size_t)B * NH * T * T), att((size_t)B * NH * T * T);
    attention_forward(out.data_ptr<float>(), preatt.data(), att.data(),
                      q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>(), B, NH, T, hs);
    return out;
}
"""
