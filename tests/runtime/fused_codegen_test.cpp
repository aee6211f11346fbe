// The runtime's fused elementwise chains without a GPU: expressions parse (or fail with one clear error),
// and the generated CUDA compiles with NVRTC for Hopper, using 16-byte loads and stores.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "advisor/runtime/elementwise_expr.h"
#include "advisor/runtime/fused_kernel_source.h"
#include "advisor/runtime/half_float.h"
#include "advisor/runtime/nvrtc_compiler.h"

namespace gpuscope::runtime {
namespace {

TEST(ElementwiseExpr, ParsesInputsInOrderWithPrecedence) {
  Result<ParsedExpr> e = parseExpr("gelu(x * w + b) - -2 * x / 4");
  ASSERT_TRUE(e) << e.status().message();
  EXPECT_EQ(e->inputs, (std::vector<std::string>{"x", "w", "b"}));
  EXPECT_EQ(e->canonical, "(gelu(((x*w)+b))-(((-2)*x)/4))");
  // Spacing does not change the cache key.
  EXPECT_EQ(parseExpr("gelu( x*w+b )-(-2)*x/4")->canonical, e->canonical);
}

TEST(ElementwiseExpr, BadExpressionsGetOneClearError) {
  const struct {
    const char* text;
    const char* expected;
  } cases[] = {
      {"gelo(x)", "at 6: unknown function 'gelo'"},
      {"max(x)", "max takes 2 argument(s), not 1"},
      {"x +", "expected a value"},
      {"(x * y", "expected ')'"},
      {"x $ y", "unexpected '$'"},
      {"", "expected a value"},
  };
  for (const auto& c : cases) {
    Result<ParsedExpr> e = parseExpr(c.text);
    ASSERT_FALSE(e) << c.text;
    EXPECT_NE(e.status().message().find(c.expected), std::string::npos) << e.status().message();
  }
  EXPECT_FALSE(parseExpr(std::string(100000, '(') + "x"));  // too deep: an error, not a stack overflow
}

TEST(FusedKernelSource, CompilesForHopperInEveryType) {
  Result<ParsedExpr> e = parseExpr("gelu(x * w + b) + silu(y) * sigmoid(x) + max(abs(y), 0.5) + rsqrt(w * w + 1)");
  ASSERT_TRUE(e);
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16}) {
    SCOPED_TRACE(toString(dtype));
    const std::string source = fusedKernelSource(*e, dtype);
    Result<std::string> ptx = compileCuda(source, "chain.cu", 90, CodeKind::kPtx);
    ASSERT_TRUE(ptx) << ptx.status().message() << "\n" << source;
    EXPECT_NE(ptx->find(".entry gpuscope_fused_vec"), std::string::npos);
    EXPECT_NE(ptx->find(".entry gpuscope_fused_scalar"), std::string::npos);
    EXPECT_NE(ptx->find(".entry gpuscope_fused_rows"), std::string::npos);  // the row reduction
    EXPECT_NE(ptx->find("shfl.sync.bfly"), std::string::npos);
    EXPECT_NE(ptx->find("ld.global.nc.v4."), std::string::npos);  // 16-byte loads
    EXPECT_NE(ptx->find("st.global.v4."), std::string::npos);     // and stores
    Result<std::string> cubin = compileCuda(source, "chain.cu", 90, CodeKind::kCubin);
    ASSERT_TRUE(cubin) << cubin.status().message();
    EXPECT_EQ(cubin->substr(1, 3), "ELF");
  }
}

TEST(ElementwiseExpr, EvaluatesOnTheHost) {
  Result<ParsedExpr> e = parseExpr("relu(x) * 2 + max(y, -1) / 4 - -x");
  ASSERT_TRUE(e);
  const float values[] = {-3.0f, -8.0f};
  EXPECT_FLOAT_EQ(evaluate(*e->root, values), 0.0f * 2 + (-1.0f) / 4 - 3.0f);
  Result<ParsedExpr> g = parseExpr("gelu(x)");
  const float one = 1.0f;
  EXPECT_NEAR(evaluate(*g->root, &one), 0.8413447f, 1e-6);
}

TEST(ElementwiseExpr, DerivativesMatchFiniteDifferences) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(0.2f, 2.5f);  // away from the kinks of relu, abs, max, min
  for (const char* text :
       {"gelu(x * w + b)", "gelu_tanh(x) * sigmoid(w)", "silu(x) / (w + 3)", "tanh(x) - exp(w) * b",
        "rsqrt(x * x + w) + sqrt(b) + log(x)", "relu(x - 0.1) * abs(w) + max(x, b) - min(w, b)", "-x * erf(w)"}) {
    SCOPED_TRACE(text);
    Result<ParsedExpr> e = parseExpr(text);
    ASSERT_TRUE(e);
    for (int trial = 0; trial < 20; ++trial) {
      float point[3];
      for (float& p : point) p = dist(rng);
      // max and min have a kink where their arguments meet: no finite difference across it.
      if (std::fabs(point[0] - point[1]) < 0.05f || std::fabs(point[0] - point[2]) < 0.05f ||
          std::fabs(point[1] - point[2]) < 0.05f) {
        continue;
      }
      for (size_t i = 0; i < e->inputs.size(); ++i) {
        const float h = 1e-2f;
        float up[3] = {point[0], point[1], point[2]}, down[3] = {point[0], point[1], point[2]};
        up[i] += h, down[i] -= h;
        const double numeric = (evaluate(*e->root, up) - evaluate(*e->root, down)) / (2.0 * h);
        const double symbolic = evaluate(*derivative(*e->root, static_cast<int>(i)), point);
        EXPECT_NEAR(symbolic, numeric, 2e-3 * std::max(1.0, std::fabs(numeric))) << e->inputs[i];
      }
    }
  }
}

TEST(ElementwiseExpr, BackwardChainsCompile) {
  Result<Backward> b = backwardChains("gelu(x * w + b) * dy");  // an input named dy: the gradient is dy_
  ASSERT_TRUE(b) << b.status().message();
  EXPECT_EQ(b->grad_name, "dy_");
  ASSERT_EQ(b->chains.size(), 4u);
  EXPECT_EQ(b->chains[1].input, "w");
  for (const GradientChain& g : b->chains) {
    Result<ParsedExpr> e = parseExpr(g.expression);
    ASSERT_TRUE(e) << g.expression;
    Result<std::string> ptx = compileCuda(fusedKernelSource(*e, DType::kBF16), "grad.cu", 90, CodeKind::kPtx);
    EXPECT_TRUE(ptx) << ptx.status().message();
  }
}

TEST(HalfFloat, RoundsToNearestEvenLikeTheGpu) {
  EXPECT_EQ(floatToFp16(1.0f), 0x3c00);
  EXPECT_EQ(floatToFp16(65504.0f), 0x7bff);            // largest fp16
  EXPECT_EQ(floatToFp16(65520.0f), 0x7c00);            // rounds to infinity
  EXPECT_EQ(floatToFp16(5.9604645e-8f), 1);            // smallest subnormal
  EXPECT_EQ(floatToFp16(1.0f + 1.0f / 2048), 0x3c00);  // a tie: to even
  EXPECT_EQ(floatToFp16(1.0f + 3.0f / 2048), 0x3c02);  // a tie: to even, upward
  EXPECT_EQ(floatToFp16(-2.5f), 0xc100);
  for (uint32_t h = 0; h < 0x7c00; ++h) {  // every finite fp16 survives the round trip
    ASSERT_EQ(floatToFp16(fp16ToFloat(static_cast<uint16_t>(h))), h) << h;
  }
  EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBf16(bitsToFloat(0x3f808000u)), 0x3f80);  // a tie: to even
  EXPECT_EQ(floatToBf16(bitsToFloat(0x3f818000u)), 0x3f82);
  EXPECT_FLOAT_EQ(bf16ToFloat(0xc040), -3.0f);
}

TEST(NvrtcCompiler, ReportsTheCompilerLog) {
  Result<std::string> bad =
      compileCuda("extern \"C\" __global__ void k() { undefined_thing(); }", "bad.cu", 90, CodeKind::kPtx);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find("undefined_thing"), std::string::npos) << bad.status().message();
}

}  // namespace
}  // namespace gpuscope::runtime
