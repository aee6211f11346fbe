// Batch-norm folding on the host: a convolution with folded weights and bias gives, on a random input,
// what the convolution followed by batch-norm gives (fp32 relative error < 1e-5); bad sizes are refused.
#include "advisor/runtime/conv_bn_fold.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace gpuscope::runtime {
namespace {

// Naive NCHW cross-correlation, stride 1, padding 1, batch 1: the reference.
std::vector<float> conv(const ConvWeights& c, const std::vector<float>& x, int64_t h, int64_t w) {
  std::vector<float> y(c.out_channels * h * w, 0.0f);
  for (int64_t k = 0; k < c.out_channels; ++k) {
    for (int64_t i = 0; i < h; ++i) {
      for (int64_t j = 0; j < w; ++j) {
        double sum = c.bias.empty() ? 0.0 : c.bias[k];
        for (int64_t ch = 0; ch < c.in_channels; ++ch) {
          for (int64_t r = 0; r < c.kernel_h; ++r) {
            for (int64_t s = 0; s < c.kernel_w; ++s) {
              const int64_t yi = i + r - 1, xj = j + s - 1;
              if (yi < 0 || yi >= h || xj < 0 || xj >= w) continue;
              sum += c.weight[((k * c.in_channels + ch) * c.kernel_h + r) * c.kernel_w + s] * x[(ch * h + yi) * w + xj];
            }
          }
        }
        y[(k * h + i) * w + j] = static_cast<float>(sum);
      }
    }
  }
  return y;
}

std::vector<float> randomVector(size_t n, float lo, float hi, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& f : v) f = d(rng);
  return v;
}

TEST(ConvBnFold, FoldedConvolutionEqualsConvolutionThenBatchNorm) {
  std::mt19937 rng(7);
  const int64_t k = 5, c = 3, h = 6, w = 7;
  for (bool with_bias : {false, true}) {
    ConvWeights cw{k, c, 3, 3, randomVector(k * c * 9, -1, 1, rng), {}};
    if (with_bias) cw.bias = randomVector(k, -1, 1, rng);
    const BatchNormStats bn{randomVector(k, 0.5f, 2, rng), randomVector(k, -1, 1, rng),
                            randomVector(k, -0.5f, 0.5f, rng), randomVector(k, 0.1f, 3, rng), 1e-5f};
    const std::vector<float> x = randomVector(c * h * w, -2, 2, rng);
    std::vector<float> expected = conv(cw, x, h, w);
    for (int64_t ch = 0; ch < k; ++ch) {
      for (int64_t p = 0; p < h * w; ++p) {
        float& v = expected[ch * h * w + p];
        v = (v - bn.running_mean[ch]) / std::sqrt(bn.running_var[ch] + bn.eps) * bn.gamma[ch] + bn.beta[ch];
      }
    }
    Result<ConvWeights> folded = foldBatchNorm(cw, bn);
    ASSERT_TRUE(folded) << folded.status().message();
    ASSERT_EQ(folded->bias.size(), static_cast<size_t>(k));
    const std::vector<float> got = conv(*folded, x, h, w);
    double worst = 0, scale = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      worst = std::max(worst, static_cast<double>(std::fabs(got[i] - expected[i])));
      scale = std::max(scale, static_cast<double>(std::fabs(expected[i])));
    }
    EXPECT_LT(worst / scale, 1e-5) << "with bias " << with_bias;
  }
}

TEST(ConvBnFold, MismatchedSizesAreUsageErrors) {
  ConvWeights cw{2, 1, 1, 1, {1, 2}, {}};
  BatchNormStats bn{{1, 1}, {0, 0}, {0, 0}, {1, 1}, 1e-5f};
  EXPECT_TRUE(foldBatchNorm(cw, bn));
  BatchNormStats short_stats = bn;
  short_stats.gamma = {1};
  EXPECT_EQ(foldBatchNorm(cw, short_stats).status().kind(), ErrorKind::kUsage);
  BatchNormStats negative = bn;
  negative.running_var = {1, -1};
  EXPECT_EQ(foldBatchNorm(cw, negative).status().kind(), ErrorKind::kUsage);
  ConvWeights wrong = cw;
  wrong.weight = {1};
  EXPECT_EQ(foldBatchNorm(wrong, bn).status().kind(), ErrorKind::kUsage);
  wrong = cw;
  wrong.bias = {1, 2, 3};
  EXPECT_EQ(foldBatchNorm(wrong, bn).status().kind(), ErrorKind::kUsage);
}

}  // namespace
}  // namespace gpuscope::runtime
