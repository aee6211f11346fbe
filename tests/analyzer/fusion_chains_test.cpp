// Fusable chains on a built trace with hand-worked savings, and on the fixtures whose programs have known
// fusable work.
#include "analyzer/fusion_chains.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/analyzer/load_for_test.h"
#include "tests/support/sample_trace.h"
#include "tests/support/trace_builder.h"

namespace gpuscope::analysis {
namespace {

using testing::TempDir;
using testing::TraceBuilder;

TEST(FusionChains, HandWorkedSavings) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  const std::string add = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>()";
  const std::string relu = "triton_poi_fused_relu_0";
  const std::string sum = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>()";
  const std::string gemm = "nvjet_sm90_tst_128x64_64x8_1x2_h_bz_NNT";
  int64_t t = 100'000;
  for (int rep = 0; rep < 2; ++rep) {
    b.nvtx("step", t - 10'000, t + 200'000);
    // add (10 µs), relu (20 µs), sum (30 µs), 5 µs apart: fused, the longest member's 30 µs remain, and the
    // 10 µs of gaps go: 40 µs saved.
    b.kernel(add, t, t + 10'000).kernel(relu, t + 15'000, t + 35'000).kernel(sum, t + 40'000, t + 70'000);
    // A GEMM and its bias and activation (5 µs each, 2 µs apart): 14 µs saved in the epilogue.
    b.kernel(gemm, t + 80'000, t + 180'000)
        .kernel(add, t + 182'000, t + 187'000)
        .kernel(relu, t + 189'000, t + 194'000);
    t += 1'000'000;
  }
  b.kernel(add, t, t + 1'000, 9);  // alone on its stream: no chain
  ASSERT_TRUE(b.finish());
  const TraceData trace = loadForTest(dir.path("t.gpuscope"));
  const std::vector<FusionPattern> patterns = findFusableChains(trace, findIterations(trace));
  ASSERT_EQ(patterns.size(), 2u);
  const FusionPattern& chain = patterns[0];
  EXPECT_EQ(chain.kind, FusionKind::kMemoryBoundChain);
  EXPECT_EQ(chain.occurrences, 2);
  ASSERT_EQ(chain.kernels.size(), 3u);
  EXPECT_EQ(chain.kernels[2], sum);
  EXPECT_EQ(chain.saving_ns, 2 * 40'000);
  EXPECT_EQ(chain.kernel_time_ns, 2 * 60'000);
  EXPECT_EQ(chain.gap_time_ns, 2 * 10'000);
  EXPECT_EQ(chain.launches_removed, 2 * 2);
  EXPECT_EQ(chain.intermediate_bytes, static_cast<int64_t>(2 * 30e-6 * 3'352'000'000'000.0));
  const FusionPattern& epilogue = patterns[1];
  EXPECT_EQ(epilogue.kind, FusionKind::kGemmEpilogue);
  EXPECT_EQ(epilogue.classes[0], KernelClass::kGemm);
  EXPECT_EQ(epilogue.saving_ns, 2 * 14'000);
  EXPECT_FALSE(epilogue.basis.empty());
  // Only the kernels starting inside the windows: the second step's.
  const std::vector<FusionPattern> second =
      findFusableChains(trace, findIterations(trace), kNone, {{1'000'000, 1'400'000}});
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(second[0].occurrences, 1);
  EXPECT_EQ(second[0].saving_ns, 40'000);
}

// A real 2-rank DDP job: both ranks run the same chains; one GPU's are those of its own kernels only, half
// of the job's (the advisor divides them by one rank's steps).
TEST(FusionChains, OneGpuOfARealTwoRankJob) {
  const TraceData& trace = loadForTest(GPUSCOPE_MULTIRANK_TRACE);
  const Iterations iterations = findIterations(trace);
  auto occurrences = [](const std::vector<FusionPattern>& patterns) {
    int64_t n = 0;
    for (const FusionPattern& p : patterns) n += p.occurrences;
    return n;
  };
  std::set<int32_t> devices(trace.kernels.device.begin(), trace.kernels.device.end());  // one per rank
  ASSERT_EQ(devices.size(), 2u);
  const int64_t all = occurrences(findFusableChains(trace, iterations));
  const int64_t gpu0 = occurrences(findFusableChains(trace, iterations, *devices.begin()));
  const int64_t gpu1 = occurrences(findFusableChains(trace, iterations, *devices.rbegin()));
  EXPECT_GT(gpu0, 100);
  EXPECT_EQ(gpu0 + gpu1, all);
  EXPECT_NEAR(static_cast<double>(gpu0), static_cast<double>(gpu1), 0.1 * static_cast<double>(gpu0));
}

// A GCN layer's message passing as PyTorch runs it eager: gather the source rows, weight them, scatter_add them
// to the targets; index_add (the gather's backward) follows and is no member (a compiler leaves it to ATen).
TEST(FusionChains, GathersAndScattersJoinTheChainsBetweenThem) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  const std::string gather = "void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int)";
  const std::string mul = "void at::native::vectorized_elementwise_kernel<4, at::native::MulFunctor<float>>(int)";
  const std::string scatter =
      "void at::native::_scatter_gather_elementwise_kernel<128, 8, at::native::ReduceAdd>(int, long)";
  const std::string index_add = "void at::native::indexFuncLargeIndex<float, long, at::native::ReduceAdd>(long)";
  int64_t t = 100'000;
  for (int rep = 0; rep < 2; ++rep) {
    b.nvtx("step", t - 10'000, t + 500'000);
    // 85, 83 and 92 µs, 1 µs apart: fused, the scatter's 92 µs remain.
    b.kernel(gather, t, t + 85'000).kernel(mul, t + 86'000, t + 169'000).kernel(scatter, t + 170'000, t + 262'000);
    b.kernel(index_add, t + 263'000, t + 400'000).kernel(mul, t + 401'000, t + 410'000);
    t += 1'000'000;
  }
  ASSERT_TRUE(b.finish());
  const TraceData trace = loadForTest(dir.path("t.gpuscope"));
  const std::vector<FusionPattern> patterns = findFusableChains(trace, findIterations(trace));
  ASSERT_EQ(patterns.size(), 1u);
  ASSERT_EQ(patterns[0].kernels.size(), 3u);
  EXPECT_EQ(patterns[0].kernels[0], gather);
  EXPECT_EQ(patterns[0].kernels[2], scatter);
  EXPECT_EQ(patterns[0].saving_ns, 2 * (85'000 + 83'000 + 2'000));
}

TEST(FusionChains, ElementwiseChainSample) {
  // scale -> add_bias -> relu -> multiply, fifty times (three warm-up iterations left out).
  const TraceData trace = loadForTest(testing::fixturePath("elementwise_chain.gpuscope"));
  const Iterations iterations = findIterations(trace);
  const std::vector<FusionPattern> patterns = findFusableChains(trace, iterations);
  ASSERT_FALSE(patterns.empty());
  const FusionPattern& p = patterns[0];
  EXPECT_EQ(p.occurrences, 50 - iterations.warmupCount());
  ASSERT_EQ(p.kernels.size(), 4u);
  EXPECT_EQ(p.kernels[0], "scale(float*, float, int)");
  EXPECT_EQ(p.kernels[3], "multiply(float*, float, int)");
  EXPECT_EQ(p.launches_removed, 3 * p.occurrences);
  // Three of four kernels' traffic is intermediate: the saving is most of the kernel time, never more
  // than it and the gaps.
  EXPECT_GT(p.saving_ns, p.kernel_time_ns / 2);
  EXPECT_LE(p.saving_ns, p.kernel_time_ns + p.gap_time_ns);
}

TEST(FusionChains, GptStepHasEpiloguesAndMemoryBoundChains) {
  const TraceData trace = loadForTest(testing::fixturePath("pytorch_gpt2_step.gpuscope"));
  const std::vector<FusionPattern> patterns = findFusableChains(trace, findIterations(trace));
  bool epilogue = false, chain = false;
  for (const FusionPattern& p : patterns) {
    epilogue = epilogue || (p.kind == FusionKind::kGemmEpilogue && p.occurrences >= 4);
    chain = chain || (p.kind == FusionKind::kMemoryBoundChain && p.occurrences >= 4);
    EXPECT_LE(p.kernels.size(), kMaxChainLength);
    EXPECT_GE(p.kernels.size(), 2u);
  }
  EXPECT_TRUE(epilogue);
  EXPECT_TRUE(chain);
}

TEST(FusionChains, NothingToFuse) {
  EXPECT_TRUE(findFusableChains(loadForTest(testing::fixturePath("launch_bound.gpuscope")), {}).empty());
}

}  // namespace
}  // namespace gpuscope::analysis

namespace gpuscope::analysis {
namespace {

TEST(FusionChains, NvtxRangesBoundChains) {
  // Four elementwise kernels back to back, the first two launched in range "block 1", the others in
  // "block 2" (as a module-annotated model has): two chains, not one across the boundary.
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  b.nvtx("block 1", 1'000, 20'000).nvtx("block 2", 20'000, 40'000);
  b.kernel("add_kernel(float*)", 10'000, 11'000, 7, 2'000).kernel("mul_kernel(float*)", 12'000, 13'000, 7, 3'000);
  b.kernel("add_kernel(float*)", 30'000, 31'000, 7, 21'000).kernel("mul_kernel(float*)", 32'000, 33'000, 7, 22'000);
  // Overlapping, not nested: "io" opens inside block 2 and closes after it.
  b.nvtx("io", 35'000, 60'000).kernel("add_kernel(float*)", 50'000, 51'000, 7, 45'000);
  ASSERT_TRUE(b.finish());
  const TraceData trace = loadForTest(dir.path("t.gpuscope"));
  const std::vector<FusionPattern> patterns = findFusableChains(trace, {});
  ASSERT_EQ(patterns.size(), 1u);
  EXPECT_EQ(patterns[0].occurrences, 2);
  EXPECT_EQ(patterns[0].kernels.size(), 2u);
}

// The PyTorch bridge's module ranges are gpuscope's, not the program's: a compiler fuses across modules, so
// they bound no chain. A dtype cast (a copy kernel) between two elementwise kernels is part of the chain.
TEST(FusionChains, BridgeModuleRangesAndCastsJoinChains) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  const std::string cast =
      "void at::native::vectorized_elementwise_kernel<8, at::native::bfloat16_copy_kernel_cuda(at::TensorIteratorBase&)"
      "::{lambda(float)#1}, std::array<char*, 2ul> >(int)";
  b.nvtx("Net.fc1 (forward)", 1'000, 20'000).nvtx("Net.act (forward)", 20'000, 40'000);
  b.kernel("add_kernel(float*)", 10'000, 11'000, 7, 2'000).kernel(cast, 12'000, 13'000, 7, 3'000);
  b.kernel("gelu_kernel(float*)", 14'000, 15'000, 7, 21'000).kernel("mul_kernel(float*)", 16'000, 17'000, 7, 22'000);
  ASSERT_TRUE(b.finish());
  const TraceData trace = loadForTest(dir.path("t.gpuscope"));
  const std::vector<FusionPattern> patterns = findFusableChains(trace, {});
  ASSERT_EQ(patterns.size(), 1u);
  ASSERT_EQ(patterns[0].kernels.size(), 4u);
  EXPECT_EQ(patterns[0].classes[1], KernelClass::kCopy);
}

}  // namespace
}  // namespace gpuscope::analysis
