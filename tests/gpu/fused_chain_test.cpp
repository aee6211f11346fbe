// The runtime's fused chains on a real GPU against the host reference (advisor/runtime/elementwise_expr.h):
// every type, sizes with tails, unaligned pointers; outputs poisoned first so an unwritten element shows.
// Skips where there is no CUDA driver or GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "advisor/runtime/cuda_driver.h"
#include "advisor/runtime/fused_chain.h"
#include "advisor/runtime/half_float.h"

namespace gpuscope::runtime {
namespace {

const CudaDriver* driverOrSkip() {
  Result<const CudaDriver*> cu = cudaDriver();
  if (!cu) return nullptr;
  return ensureContext(**cu) ? *cu : nullptr;
}

uint16_t toBits(DType d, float f) { return d == DType::kBF16 ? floatToBf16(f) : floatToFp16(f); }
float fromBits(DType d, uint16_t h) { return d == DType::kBF16 ? bf16ToFloat(h) : fp16ToFloat(h); }

// Host values as the chain's type: the bytes to upload, and the values the GPU will see.
std::vector<char> encode(DType d, std::vector<float>& values) {
  std::vector<char> bytes(values.size() * elementBytes(d));
  for (size_t i = 0; i < values.size(); ++i) {
    if (d == DType::kF32) {
      std::memcpy(&bytes[i * 4], &values[i], 4);
    } else {
      const uint16_t h = toBits(d, values[i]);
      values[i] = fromBits(d, h);
      std::memcpy(&bytes[i * 2], &h, 2);
    }
  }
  return bytes;
}

float decode(DType d, const char* p) {
  if (d == DType::kF32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, p, 2);
  return fromBits(d, h);
}

// Runs the chain on n elements starting `offset` elements into each buffer; returns the largest error
// relative to max(1, |reference|).
double runAndCompare(const CudaDriver& cu, const char* expression, DType d, int64_t n, int64_t offset) {
  Result<FusedChain> chain = FusedChain::create(expression, d);
  EXPECT_TRUE(chain) << chain.status().message();
  if (!chain) return 1e9;
  Result<ParsedExpr> expr = parseExpr(expression);
  const size_t bytes = static_cast<size_t>((n + offset) * elementBytes(d));
  std::mt19937 rng(static_cast<unsigned>(n));
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  std::vector<std::vector<float>> values(chain->inputCount(), std::vector<float>(static_cast<size_t>(n)));
  std::vector<CUdeviceptr> inputs;
  for (auto& v : values) {
    for (float& x : v) x = dist(rng);
    CUdeviceptr p;
    cu.memAlloc(&p, bytes);
    const std::vector<char> host = encode(d, v);
    cu.memcpyHtoD(p + offset * elementBytes(d), host.data(), host.size());
    inputs.push_back(p + offset * elementBytes(d));
  }
  CUdeviceptr out;
  cu.memAlloc(&out, bytes);
  cu.memsetD8(out, 0xff, bytes);  // NaN in every type: an element never written cannot pass
  EXPECT_TRUE(chain->launch(inputs, out + offset * elementBytes(d), n, nullptr));
  EXPECT_TRUE(cu.check(cu.ctxSynchronize(), "cuCtxSynchronize"));
  std::vector<char> result(static_cast<size_t>(n * elementBytes(d)));
  cu.memcpyDtoH(result.data(), out + offset * elementBytes(d), result.size());
  double worst = 0;
  std::vector<float> element(values.size());
  for (int64_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < values.size(); ++k) element[k] = values[k][static_cast<size_t>(i)];
    const float reference = evaluate(*expr->root, element.data());
    const float got = decode(d, &result[static_cast<size_t>(i * elementBytes(d))]);
    worst = std::max(
        worst,
        std::isnan(got) ? 1e9 : std::fabs(got - reference) / std::max(1.0, std::fabs(static_cast<double>(reference))));
  }
  for (CUdeviceptr p : inputs) cu.memFree(p - offset * elementBytes(d));
  cu.memFree(out);
  return worst;
}

TEST(FusedChainGpu, MatchesTheHostInEveryType) {
  const CudaDriver* cu = driverOrSkip();
  if (!cu) GTEST_SKIP() << "no CUDA driver or GPU: " << cudaDriver().status().message();
  const char* expression = "gelu(x * w + b) + silu(w) * sigmoid(x) - max(abs(b), 0.5) + tanh(x)";
  for (DType d : {DType::kF32, DType::kBF16, DType::kF16}) {
    const double tolerance = d == DType::kF32 ? 1e-5 : 1e-2;
    for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{1000003}, int64_t{1} << 22}) {
      for (int64_t offset : {int64_t{0}, int64_t{1}}) {  // offset 1: unaligned, the scalar kernel throughout
        SCOPED_TRACE(std::string(toString(d)) + " n=" + std::to_string(n) + " offset=" + std::to_string(offset));
        EXPECT_LT(runAndCompare(*cu, expression, d, n, offset), tolerance);
      }
    }
  }
}

// The chain reduced along rows (sum, max, mean) against the host in double: 16-byte loads where the row
// length allows, scalar loads where it does not; more rows than one launch's blocks; outputs poisoned.
TEST(FusedChainGpu, RowReductionsMatchTheHost) {
  const CudaDriver* cu = driverOrSkip();
  if (!cu) GTEST_SKIP() << "no CUDA driver or GPU: " << cudaDriver().status().message();
  const char* expression = "x * w + gelu(x)";
  for (DType d : {DType::kF32, DType::kBF16}) {
    Result<FusedChain> chain = FusedChain::create(expression, d);
    ASSERT_TRUE(chain) << chain.status().message();
    Result<ParsedExpr> expr = parseExpr(expression);
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{37, 4096}, {5, 1001}, {70000, 24}}) {
      std::mt19937 rng(static_cast<unsigned>(rows + cols));
      std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
      std::vector<std::vector<float>> values(2, std::vector<float>(static_cast<size_t>(rows * cols)));
      std::vector<CUdeviceptr> inputs;
      for (auto& v : values) {
        for (float& x : v) x = dist(rng);
        const std::vector<char> host = encode(d, v);
        CUdeviceptr p;
        cu->memAlloc(&p, host.size());
        cu->memcpyHtoD(p, host.data(), host.size());
        inputs.push_back(p);
      }
      CUdeviceptr out;
      cu->memAlloc(&out, static_cast<size_t>(rows * elementBytes(d)));
      for (Reduction op : {Reduction::kSum, Reduction::kMax, Reduction::kMean}) {
        SCOPED_TRACE(std::string(toString(d)) + " " + std::to_string(rows) + "x" + std::to_string(cols) + " op " +
                     std::to_string(static_cast<int>(op)));
        cu->memsetD8(out, 0xff, static_cast<size_t>(rows * elementBytes(d)));
        ASSERT_TRUE(chain->reduceRows(inputs, out, rows, cols, op, nullptr));
        ASSERT_TRUE(cu->check(cu->ctxSynchronize(), "cuCtxSynchronize"));
        std::vector<char> result(static_cast<size_t>(rows * elementBytes(d)));
        cu->memcpyDtoH(result.data(), out, result.size());
        double worst = 0;
        for (int64_t r = 0; r < rows; ++r) {
          double acc = op == Reduction::kMax ? -INFINITY : 0.0, magnitude = 0;
          for (int64_t c = 0; c < cols; ++c) {
            const float element[2] = {values[0][r * cols + c], values[1][r * cols + c]};
            const double v = evaluate(*expr->root, element);
            acc = op == Reduction::kMax ? std::max(acc, v) : acc + v;
            magnitude += std::fabs(v);
          }
          if (op == Reduction::kMean) acc /= cols, magnitude /= cols;
          if (op == Reduction::kMax) magnitude = std::fabs(acc);
          const float got = decode(d, &result[static_cast<size_t>(r * elementBytes(d))]);
          worst = std::max(worst, std::isnan(got) ? 1e9 : std::fabs(got - acc) / std::max(1.0, magnitude));
        }
        EXPECT_LT(worst, d == DType::kF32 ? 1e-5 : 1e-2);
      }
      for (CUdeviceptr p : inputs) cu->memFree(p);
      cu->memFree(out);
    }
  }
}

TEST(FusedChainGpu, BackwardChainsMatchTheHost) {
  const CudaDriver* cu = driverOrSkip();
  if (!cu) GTEST_SKIP() << "no CUDA driver or GPU";
  Result<Backward> backward = backwardChains("gelu(x * w + b) * sigmoid(w)");
  ASSERT_TRUE(backward);
  for (const GradientChain& g : backward->chains) {
    for (DType d : {DType::kF32, DType::kBF16}) {
      SCOPED_TRACE(g.input + " " + std::string(toString(d)) + ": " + g.expression);
      EXPECT_LT(runAndCompare(*cu, g.expression.c_str(), d, 1000003, 0), d == DType::kF32 ? 1e-5 : 1e-2);
    }
  }
}

TEST(FusedChainGpu, CompiledOncePerExpressionTypeAndDevice) {
  if (!driverOrSkip()) GTEST_SKIP() << "no CUDA driver or GPU";
  const int64_t before = fusedChainsCompiled();
  ASSERT_TRUE(FusedChain::create("relu(a) * b", DType::kBF16));
  ASSERT_TRUE(FusedChain::create("relu( a )*b", DType::kBF16));  // the same chain, spelled differently
  EXPECT_EQ(fusedChainsCompiled(), before + 1);
  ASSERT_TRUE(FusedChain::create("relu(a) * b", DType::kF32));
  EXPECT_EQ(fusedChainsCompiled(), before + 2);
  Result<FusedChain> chain = FusedChain::create("a + b", DType::kF32);
  ASSERT_TRUE(chain);
  EXPECT_FALSE(chain->launch({0}, 0, 10, nullptr));  // one input for a chain of two: an error, no launch
}

}  // namespace
}  // namespace gpuscope::runtime
