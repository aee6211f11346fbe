// gpuscope diff's comparison: per steady iteration when both runs have iterations, appeared and
// disappeared kernels, and a run compared with itself.
#include "analyzer/trace_diff.h"
#include "analyzer/iterations.h"

#include <gtest/gtest.h>

#include "tests/analyzer/load_for_test.h"
#include "tests/support/sample_trace.h"
#include "tests/support/trace_builder.h"

namespace gpuscope::analysis {
namespace {

using testing::TempDir;
using testing::TraceBuilder;

// steps NVTX steps, each with an add and a mul kernel (and, when fused, one fused kernel instead).
void writeRun(const std::string& path, int steps, bool fused) {
  TraceBuilder b(path);
  int64_t t = 1'000'000;
  for (int s = 0; s < steps; ++s) {
    b.nvtx("step", t, t + 100'000);
    if (fused) {
      b.kernel("triton_poi_fused_add_mul_0", t + 10'000, t + 30'000);
    } else {
      b.kernel("add_kernel(float*)", t + 10'000, t + 30'000).kernel("mul_kernel(float*)", t + 40'000, t + 60'000);
    }
    t += 200'000;
  }
  ASSERT_TRUE(b.finish());
}

TEST(TraceDiff, FusedRunComparedPerIteration) {
  TempDir dir;
  writeRun(dir.path("before.gpuscope"), 4, false);
  writeRun(dir.path("after.gpuscope"), 8, true);  // twice as many steps: totals would mislead
  const TraceDiff d = diffTraces(loadForTest(dir.path("before.gpuscope")), loadForTest(dir.path("after.gpuscope")));
  ASSERT_TRUE(d.per_iteration);
  EXPECT_DOUBLE_EQ(d.kernel_count.before, 8);
  EXPECT_DOUBLE_EQ(d.kernel_count.after, 8);
  ASSERT_EQ(d.classes.size(), 1u);                        // all elementwise
  EXPECT_DOUBLE_EQ(d.classes[0].time_ns.before, 40'000);  // per iteration
  EXPECT_DOUBLE_EQ(d.classes[0].time_ns.after, 20'000);
  EXPECT_DOUBLE_EQ(d.classes[0].count.before, 2);
  EXPECT_DOUBLE_EQ(d.classes[0].count.after, 1);
  ASSERT_EQ(d.appeared.size(), 1u);
  EXPECT_EQ(d.appeared[0], "triton_poi_fused_add_mul_0");
  EXPECT_EQ(d.disappeared.size(), 2u);
}

// A built 2-rank job whose rank 1 was 300 µs late to its GEMM each step, against the same job on time: rank 1's
// host work and GPU idle time are 300 µs shorter and its all-reduce starts as early as rank 0's; a single
// process has no ranks to compare.
TEST(TraceDiff, TwoRunsOfAJobComparedRankByRank) {
  TempDir late_dir, on_time_dir;
  const TraceData late = loadForTest(testing::buildTwoRankJob(late_dir.dir(), {}));
  const TraceData on_time = loadForTest(testing::buildTwoRankJob(on_time_dir.dir(), {.late_ns = 0}));
  const TraceDiff d = diffTraces(late, on_time);
  ASSERT_EQ(d.ranks.size(), 2u);
  EXPECT_EQ(d.ranks[0].rank, 0);
  EXPECT_EQ(d.ranks[1].rank, 1);
  EXPECT_DOUBLE_EQ(d.ranks[0].comm_alone_ns.delta(), 0);  // 380 µs: waiting for rank 1, then for nobody
  EXPECT_DOUBLE_EQ(d.ranks[1].comm_alone_ns.before, 80'000);
  EXPECT_DOUBLE_EQ(d.ranks[1].comm_alone_ns.after, 380'000);
  EXPECT_DOUBLE_EQ(d.ranks[1].idle_ns.delta(), -300'000);
  EXPECT_DOUBLE_EQ(d.ranks[1].host_ns.delta(), -300'000);
  EXPECT_DOUBLE_EQ(d.job_step_ns.before, 1'000'000);  // both paced by the GPU's 1 ms steps
  EXPECT_DOUBLE_EQ(d.job_step_ns.after, 1'000'000);
  TempDir dir;
  writeRun(dir.path("a.gpuscope"), 6, false);
  EXPECT_TRUE(diffTraces(loadForTest(dir.path("a.gpuscope")), late).ranks.empty());
}

// A host that queues its steps ahead of the GPU: each step's range is launched 50 µs after the last, its
// 100 µs kernel runs once the GPU is free, so a step's own span grows with the queue. The step diff shows is
// the one advise and stats show: the median start-to-start period, the GPU's 100 µs.
TEST(TraceDiff, TheStepIsTheStartToStartPeriodAsInAdvise) {
  TempDir dir;
  TraceBuilder b(dir.path("queued.gpuscope"));
  for (int s = 0; s < 12; ++s) {
    const int64_t host = 1'000'000 + s * 50'000, gpu = 1'010'000 + s * 100'000;
    b.nvtx("step", host, host + 20'000);
    b.kernel("gemm_kernel", gpu, gpu + 100'000, 7, host + 5'000);
  }
  ASSERT_TRUE(b.finish());
  const TraceData t = loadForTest(dir.path("queued.gpuscope"));
  const Iterations it = findIterations(t);
  ASSERT_EQ(it.source, IterationSource::kNvtx);
  EXPECT_GT(it.steady_duration.median, 300'000);  // each step's span holds the queue before it
  EXPECT_EQ(stepNs(it), 100'000);
  const TraceDiff d = diffTraces(t, t);
  ASSERT_TRUE(d.per_iteration);
  EXPECT_DOUBLE_EQ(d.iteration_ns.before, 100'000);
  ASSERT_EQ(d.kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(d.kernels[0].count.before, 1);  // one kernel per timed step
  EXPECT_DOUBLE_EQ(d.kernels[0].time_ns.before, 100'000);
}

TEST(TraceDiff, ARunAgainstItselfChangesNothing) {
  const TraceData run = loadForTest(testing::fixturePath("pytorch_gpt2_step.gpuscope"));
  const TraceDiff d = diffTraces(run, run);
  EXPECT_TRUE(d.per_iteration);
  EXPECT_EQ(d.iteration_ns.delta(), 0);
  EXPECT_EQ(d.peak_memory_bytes.delta(), 0);
  EXPECT_TRUE(d.appeared.empty());
  EXPECT_TRUE(d.disappeared.empty());
  for (const KernelChange& k : d.kernels) EXPECT_EQ(k.time_ns.delta(), 0) << k.name;
}

TEST(TraceDiff, WithoutIterationsTotalsAreCompared) {
  const TraceDiff d = diffTraces(loadForTest(testing::fixturePath("launch_bound.gpuscope")),
                                 loadForTest(testing::fixturePath("multi_stream.gpuscope")));
  EXPECT_FALSE(d.per_iteration);
  EXPECT_DOUBLE_EQ(d.kernel_count.before, 20000);
  EXPECT_DOUBLE_EQ(d.kernel_count.after, 32);
  EXPECT_EQ(d.appeared.size(), 1u);
  EXPECT_EQ(d.disappeared.size(), 1u);
}

}  // namespace
}  // namespace gpuscope::analysis
