// Convolution with bias and ReLU in cuDNN's fused epilogue, on a real GPU, against a host reference in
// fp32 (relative error < 1e-5): plain, bias, bias + ReLU; stride 1 and 2, with padding, a batch of two.
// Skips where there is no CUDA driver or GPU.
#include "advisor/runtime/conv_epilogue.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "advisor/runtime/cuda_driver.h"

namespace gpuscope::runtime {
namespace {

std::vector<float> reference(const ConvShape& s, const std::vector<float>& x, const std::vector<float>& w,
                             const std::vector<float>& bias, ConvEpilogueKind kind) {
  const int64_t oh = s.outHeight(), ow = s.outWidth();
  std::vector<float> y(s.batch * s.out_channels * oh * ow);
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t k = 0; k < s.out_channels; ++k) {
      for (int64_t i = 0; i < oh; ++i) {
        for (int64_t j = 0; j < ow; ++j) {
          double sum = kind == ConvEpilogueKind::kNone ? 0.0 : bias[k];
          for (int64_t c = 0; c < s.in_channels; ++c) {
            for (int64_t r = 0; r < s.kernel_h; ++r) {
              for (int64_t q = 0; q < s.kernel_w; ++q) {
                const int64_t yi = i * s.stride + r - s.pad, xj = j * s.stride + q - s.pad;
                if (yi < 0 || yi >= s.height || xj < 0 || xj >= s.width) continue;
                sum += w[((k * s.in_channels + c) * s.kernel_h + r) * s.kernel_w + q] *
                       x[((n * s.in_channels + c) * s.height + yi) * s.width + xj];
              }
            }
          }
          if (kind == ConvEpilogueKind::kBiasRelu) sum = std::max(sum, 0.0);
          y[((n * s.out_channels + k) * oh + i) * ow + j] = static_cast<float>(sum);
        }
      }
    }
  }
  return y;
}

TEST(ConvEpilogueGpu, MatchesTheHost) {
  Result<const CudaDriver*> driver = cudaDriver();
  if (!driver || !ensureContext(**driver)) GTEST_SKIP() << "no CUDA driver or GPU";
  const CudaDriver& cu = **driver;
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int64_t stride : {1, 2}) {
    const ConvShape shape{2, 3, 11, 9, 4, 3, 3, 1, stride};
    for (ConvEpilogueKind kind : {ConvEpilogueKind::kNone, ConvEpilogueKind::kBias, ConvEpilogueKind::kBiasRelu}) {
      SCOPED_TRACE("stride " + std::to_string(stride) + ", kind " + std::to_string(static_cast<int>(kind)));
      Result<ConvEpilogue> conv = ConvEpilogue::create(shape, kind);
      ASSERT_TRUE(conv) << conv.status().message();
      std::vector<float> x(shape.batch * shape.in_channels * shape.height * shape.width),
          w(shape.out_channels * shape.in_channels * shape.kernel_h * shape.kernel_w), bias(shape.out_channels);
      for (auto* v : {&x, &w, &bias}) {
        for (float& f : *v) f = dist(rng);
      }
      const std::vector<float> expected = reference(shape, x, w, bias, kind);
      CUdeviceptr dx = 0, dw = 0, db = 0, dy = 0;
      cu.memAlloc(&dx, x.size() * 4), cu.memAlloc(&dw, w.size() * 4), cu.memAlloc(&db, bias.size() * 4);
      cu.memAlloc(&dy, expected.size() * 4);
      cu.memcpyHtoD(dx, x.data(), x.size() * 4);
      cu.memcpyHtoD(dw, w.data(), w.size() * 4);
      cu.memcpyHtoD(db, bias.data(), bias.size() * 4);
      cu.memsetD8(dy, 0xff, expected.size() * 4);  // NaN: an unwritten element cannot pass
      ASSERT_TRUE(conv->run(dx, dw, db, dy, nullptr));
      ASSERT_TRUE(cu.check(cu.ctxSynchronize(), "cuCtxSynchronize"));
      std::vector<float> got(expected.size());
      cu.memcpyDtoH(got.data(), dy, got.size() * 4);
      double worst = 0, scale = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        worst = std::max(worst, std::isnan(got[i]) ? 1e9 : std::fabs(static_cast<double>(got[i]) - expected[i]));
        scale = std::max(scale, std::fabs(static_cast<double>(expected[i])));
      }
      EXPECT_LT(worst / scale, 1e-5);
      for (CUdeviceptr p : {dx, dw, db, dy}) cu.memFree(p);
    }
  }
}

TEST(ConvEpilogueGpu, ShapesWithoutOutputAreRefused) {
  if (!cudaDriver()) GTEST_SKIP() << "no CUDA driver or GPU";
  EXPECT_EQ(ConvEpilogue::create({1, 3, 2, 2, 4, 5, 5, 0, 1}, ConvEpilogueKind::kBiasRelu).status().kind(),
            ErrorKind::kUsage);
}

}  // namespace
}  // namespace gpuscope::runtime
