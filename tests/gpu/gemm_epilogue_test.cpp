// GEMM + bias + activation through cuBLASLt's epilogue on a real GPU, against a host reference in fp32:
// row-major shapes that are not square, bf16 and fp16, the GELU's pre-activation output for the backward.
// Skips where there is no CUDA driver or GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "advisor/runtime/cuda_driver.h"
#include "advisor/runtime/gemm_epilogue.h"
#include "advisor/runtime/half_float.h"

namespace gpuscope::runtime {
namespace {

struct Buffer {
  const CudaDriver& cu;
  CUdeviceptr ptr = 0;
  Buffer(const CudaDriver& driver, size_t bytes) : cu(driver) { cu.memAlloc(&ptr, bytes); }
  ~Buffer() { cu.memFree(ptr); }
};

uint16_t encode(DType d, float f) { return d == DType::kBF16 ? floatToBf16(f) : floatToFp16(f); }
float decode(DType d, uint16_t h) { return d == DType::kBF16 ? bf16ToFloat(h) : fp16ToFloat(h); }

// Random values rounded to the type: the bits for the GPU and the values the host computes with.
std::vector<uint16_t> randomOf(DType d, size_t n, std::vector<float>& values, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<uint16_t> bits(n);
  values.resize(n);
  for (size_t i = 0; i < n; ++i) bits[i] = encode(d, dist(rng)), values[i] = decode(d, bits[i]);
  return bits;
}

float activate(Epilogue e, float v) {
  if (e == Epilogue::kBiasRelu) return std::fmax(v, 0.0f);
  if (e == Epilogue::kBiasGelu || e == Epilogue::kBiasGeluAux) {
    return 0.5f * v * (1.0f + std::tanh(0.79788456f * (v + 0.044715f * v * v * v)));  // cuBLASLt's GELU
  }
  return v;
}

TEST(GemmEpilogueGpu, MatchesTheHost) {
  Result<const CudaDriver*> driver = cudaDriver();
  if (!driver || !ensureContext(**driver)) GTEST_SKIP() << "no CUDA driver or GPU";
  const CudaDriver& cu = **driver;
  const GemmShape shape{72, 136, 256};
  std::mt19937 rng(3);
  for (DType d : {DType::kBF16, DType::kF16}) {
    for (Epilogue e : {Epilogue::kBias, Epilogue::kBiasRelu, Epilogue::kBiasGelu, Epilogue::kBiasGeluAux}) {
      SCOPED_TRACE(std::string(toString(d)) + " epilogue " + std::to_string(static_cast<int>(e)));
      Result<GemmEpilogue> gemm = GemmEpilogue::create(shape, e, d);
      ASSERT_TRUE(gemm) << gemm.status().message();
      std::vector<float> x, w, bias;
      const auto xb = randomOf(d, shape.m * shape.k, x, rng), wb = randomOf(d, shape.k * shape.n, w, rng),
                 bb = randomOf(d, shape.n, bias, rng);
      const size_t out_bytes = shape.m * shape.n * 2;
      Buffer dx(cu, xb.size() * 2), dw(cu, wb.size() * 2), dbias(cu, bb.size() * 2), dy(cu, out_bytes),
          daux(cu, out_bytes);
      cu.memcpyHtoD(dx.ptr, xb.data(), xb.size() * 2);
      cu.memcpyHtoD(dw.ptr, wb.data(), wb.size() * 2);
      cu.memcpyHtoD(dbias.ptr, bb.data(), bb.size() * 2);
      cu.memsetD8(dy.ptr, 0xff, out_bytes);  // NaN: an unwritten element cannot pass
      cu.memsetD8(daux.ptr, 0xff, out_bytes);
      ASSERT_TRUE(gemm->run(dx.ptr, dw.ptr, dbias.ptr, dy.ptr, daux.ptr, nullptr));
      ASSERT_TRUE(cu.check(cu.ctxSynchronize(), "cuCtxSynchronize"));
      std::vector<uint16_t> y(shape.m * shape.n), aux(shape.m * shape.n);
      cu.memcpyDtoH(y.data(), dy.ptr, out_bytes);
      cu.memcpyDtoH(aux.data(), daux.ptr, out_bytes);
      double worst = 0, worst_aux = 0;
      for (int64_t i = 0; i < shape.m; ++i) {
        for (int64_t j = 0; j < shape.n; ++j) {
          float sum = bias[j];
          for (int64_t k = 0; k < shape.k; ++k) sum += x[i * shape.k + k] * w[k * shape.n + j];
          const float got = decode(d, y[i * shape.n + j]);
          const double err = std::isnan(got) ? 1e9 : std::fabs(got - activate(e, sum)) / std::max(1.0f, std::fabs(sum));
          worst = std::max(worst, err);
          if (e == Epilogue::kBiasGeluAux) {
            const float pre = decode(d, aux[i * shape.n + j]);
            worst_aux =
                std::max(worst_aux, std::isnan(pre) ? 1e9 : std::fabs(pre - sum) / std::max(1.0f, std::fabs(sum)));
          }
        }
      }
      EXPECT_LT(worst, 1e-2);
      EXPECT_LT(worst_aux, 1e-2);
    }
  }
}

// The backward's GEMMs: X stored k×m and/or W stored n×k, each against the host on the stored layout.
TEST(GemmEpilogueGpu, TransposedOperands) {
  Result<const CudaDriver*> driver = cudaDriver();
  if (!driver || !ensureContext(**driver)) GTEST_SKIP() << "no CUDA driver or GPU";
  const CudaDriver& cu = **driver;
  std::mt19937 rng(5);
  const DType d = DType::kBF16;
  for (int variant = 1; variant < 4; ++variant) {
    GemmShape shape{40, 72, 96};
    shape.x_transposed = variant & 1;
    shape.w_transposed = variant & 2;
    SCOPED_TRACE("x transposed " + std::to_string(shape.x_transposed) + ", w " + std::to_string(shape.w_transposed));
    Result<GemmEpilogue> gemm = GemmEpilogue::create(shape, Epilogue::kNone, d);
    ASSERT_TRUE(gemm) << gemm.status().message();
    std::vector<float> x, w;
    const auto xb = randomOf(d, shape.m * shape.k, x, rng), wb = randomOf(d, shape.k * shape.n, w, rng);
    const size_t out_bytes = shape.m * shape.n * 2;
    Buffer dx(cu, xb.size() * 2), dw(cu, wb.size() * 2), dy(cu, out_bytes);
    cu.memcpyHtoD(dx.ptr, xb.data(), xb.size() * 2);
    cu.memcpyHtoD(dw.ptr, wb.data(), wb.size() * 2);
    cu.memsetD8(dy.ptr, 0xff, out_bytes);
    ASSERT_TRUE(gemm->run(dx.ptr, dw.ptr, 0, dy.ptr, 0, nullptr));
    ASSERT_TRUE(cu.check(cu.ctxSynchronize(), "cuCtxSynchronize"));
    std::vector<uint16_t> y(shape.m * shape.n);
    cu.memcpyDtoH(y.data(), dy.ptr, out_bytes);
    double worst = 0;
    for (int64_t i = 0; i < shape.m; ++i) {
      for (int64_t j = 0; j < shape.n; ++j) {
        float sum = 0;
        for (int64_t k = 0; k < shape.k; ++k) {
          const float xv = shape.x_transposed ? x[k * shape.m + i] : x[i * shape.k + k];
          const float wv = shape.w_transposed ? w[j * shape.k + k] : w[k * shape.n + j];
          sum += xv * wv;
        }
        const float got = decode(d, y[i * shape.n + j]);
        worst = std::max(worst, std::isnan(got) ? 1e9 : std::fabs(got - sum) / std::max(1.0f, std::fabs(sum)));
      }
    }
    EXPECT_LT(worst, 1e-2);
  }
}

TEST(GemmEpilogueGpu, Fp32OperandsAreRefused) {
  if (!cudaDriver()) GTEST_SKIP() << "no CUDA driver or GPU";
  EXPECT_FALSE(GemmEpilogue::create({64, 64, 64}, Epilogue::kBiasGelu, DType::kF32));
}

}  // namespace
}  // namespace gpuscope::runtime
