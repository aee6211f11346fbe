// The runtime's fused chains on a real GPU against the host reference (advisor/runtime/elementwise_expr.h):
// every type, sizes with tails, unaligned pointers; outputs poisoned first so an unwritten element shows.
// Skips where there is no CUDA driver or GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
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

// Uploads values as the chain's type (rounding them to what the GPU sees) into a new allocation.
CUdeviceptr upload(const CudaDriver& cu, DType d, std::vector<float>& values) {
  const std::vector<char> host = encode(d, values);
  CUdeviceptr p;
  cu.memAlloc(&p, host.size());
  cu.memcpyHtoD(p, host.data(), host.size());
  return p;
}

std::vector<float> download(const CudaDriver& cu, DType d, CUdeviceptr p, size_t n) {
  std::vector<char> bytes(n * elementBytes(d));
  cu.memcpyDtoH(bytes.data(), p, bytes.size());
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i) values[i] = decode(d, &bytes[i * elementBytes(d)]);
  return values;
}

// The backward of the row reductions against the host: dy[r] · ∂chain/∂input (÷ cols for a mean); for a max
// only where the element, rounded to the type, equals the stored maximum. "x * w" for the max, so the host
// and the GPU round the same products; gradients poisoned first.
TEST(FusedChainGpu, RowReductionBackwardMatchesTheHost) {
  const CudaDriver* cu = driverOrSkip();
  if (!cu) GTEST_SKIP() << "no CUDA driver or GPU";
  for (auto [expression, op] : {std::pair<const char*, Reduction>{"x * w + gelu(x)", Reduction::kSum},
                                {"x * w + gelu(x)", Reduction::kMean},
                                {"x * w", Reduction::kMax}}) {
    Result<ParsedExpr> expr = parseExpr(expression);
    ASSERT_TRUE(expr);
    for (DType d : {DType::kF32, DType::kBF16}) {
      Result<FusedChain> chain = FusedChain::create(expression, d);
      ASSERT_TRUE(chain) << chain.status().message();
      for (auto [rows, cols] : {std::pair<int64_t, int64_t>{37, 4096}, {70000, 5}}) {
        SCOPED_TRACE(std::string(expression) + " op " + std::to_string(static_cast<int>(op)) + " " +
                     std::string(toString(d)) + " " + std::to_string(rows) + "x" + std::to_string(cols));
        std::mt19937 rng(static_cast<unsigned>(rows));
        std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
        const size_t n = static_cast<size_t>(rows * cols);
        std::vector<std::vector<float>> values(2, std::vector<float>(n));
        std::vector<float> dy(static_cast<size_t>(rows));
        std::vector<CUdeviceptr> inputs, grads;
        for (auto& v : values) {
          for (float& x : v) x = dist(rng);
          inputs.push_back(upload(*cu, d, v));
        }
        for (float& g : dy) g = dist(rng);
        const CUdeviceptr dy_d = upload(*cu, d, dy);
        CUdeviceptr y;
        cu->memAlloc(&y, static_cast<size_t>(rows) * elementBytes(d));
        for (int i = 0; i < 2; ++i) {
          grads.push_back(0);
          cu->memAlloc(&grads.back(), n * elementBytes(d));
          cu->memsetD8(grads.back(), 0xff, n * elementBytes(d));
        }
        ASSERT_TRUE(chain->reduceRows(inputs, y, rows, cols, op, nullptr));
        ASSERT_TRUE(chain->reduceRowsBackward(inputs, y, dy_d, grads, rows, cols, op, nullptr));
        ASSERT_TRUE(cu->check(cu->ctxSynchronize(), "cuCtxSynchronize"));
        const std::vector<float> maxima = download(*cu, d, y, static_cast<size_t>(rows));
        for (int i = 0; i < 2; ++i) {
          const std::vector<float> got = download(*cu, d, grads[i], n);
          const std::unique_ptr<Expr> dexpr = derivative(*expr->root, i);
          double worst = 0;
          for (size_t e = 0; e < n; ++e) {
            const size_t r = e / static_cast<size_t>(cols);
            const float element[2] = {values[0][e], values[1][e]};
            std::vector<float> value{evaluate(*expr->root, element)};
            encode(d, value);  // rounded as stored
            const bool picked = op != Reduction::kMax || value[0] == maxima[r];
            const double g = op == Reduction::kMean ? dy[r] / static_cast<double>(cols) : dy[r];
            const double want = picked ? g * evaluate(*dexpr, element) : 0.0;
            worst =
                std::max(worst, std::isnan(got[e]) ? 1e9 : std::fabs(got[e] - want) / std::max(1.0, std::fabs(want)));
          }
          EXPECT_LT(worst, d == DType::kF32 ? 1e-5 : 1e-2) << "gradient of input " << i;
        }
        for (CUdeviceptr p : inputs) cu->memFree(p);
        for (CUdeviceptr p : grads) cu->memFree(p);
        cu->memFree(y);
        cu->memFree(dy_d);
      }
    }
  }
  Result<FusedChain> chain = FusedChain::create("x * w", DType::kF32);
  ASSERT_TRUE(chain);
  EXPECT_FALSE(chain->reduceRowsBackward({0, 0}, 0, 0, {0}, 1, 1, Reduction::kSum, nullptr));  // one gradient short
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

// An optimizer-style update in place (the output is the first input), with a tail past the vectors.
TEST(FusedChainGpu, UpdatesInPlace) {
  const CudaDriver* cu = driverOrSkip();
  if (!cu) GTEST_SKIP() << "no CUDA driver or GPU";
  for (DType d : {DType::kF32, DType::kBF16}) {
    Result<FusedChain> chain = FusedChain::create("w - 0.5 * g", d);
    ASSERT_TRUE(chain);
    const size_t n = 1000003;
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
    std::vector<float> w(n), g(n);
    for (size_t i = 0; i < n; ++i) w[i] = dist(rng), g[i] = dist(rng);
    const CUdeviceptr wd = upload(*cu, d, w), gd = upload(*cu, d, g);
    ASSERT_TRUE(chain->launch({wd, gd}, wd, static_cast<int64_t>(n), nullptr));
    const std::vector<float> got = download(*cu, d, wd, n);
    double worst = 0;
    for (size_t i = 0; i < n; ++i) {
      const double want = w[i] - 0.5 * g[i];
      worst = std::max(worst, std::fabs(got[i] - want) / std::max(1.0, std::fabs(want)));
    }
    EXPECT_LT(worst, d == DType::kF32 ? 1e-5 : 1e-2) << toString(d);
    cu->memFree(wd);
    cu->memFree(gd);
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
