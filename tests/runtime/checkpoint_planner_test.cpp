// The checkpoint planner on stacks whose answer is known: √n equal segments, the fewest segments for a
// budget, a large layer given a segment of its own, and a budget nothing meets.
#include "advisor/runtime/checkpoint_planner.h"

#include <gtest/gtest.h>

namespace gpuscope::runtime {
namespace {

constexpr int64_t kMiB = 1 << 20;

std::vector<LayerCost> uniform(size_t n) { return std::vector<LayerCost>(n, {10 * kMiB, 1 * kMiB, 1'000'000}); }

TEST(CheckpointPlanner, SquareRootSegmentsByDefault) {
  const CheckpointPlan p = planUniform(uniform(24));
  EXPECT_EQ(p.segment_starts, (std::vector<size_t>{0, 4, 9, 14, 19}));
  EXPECT_EQ(p.baseline_bytes, 240 * kMiB);
  EXPECT_EQ(p.peak_bytes, 4 * kMiB + 50 * kMiB);  // four boundaries kept, the largest segment (5 layers) live
  EXPECT_EQ(p.extra_ns, 19'000'000);              // every segment but the last is recomputed
  EXPECT_LE(p.peak_bytes * 4, p.baseline_bytes);  // under a quarter of the baseline
}

TEST(CheckpointPlanner, FewestSegmentsThatFitTheBudget) {
  Result<CheckpointPlan> p = planForBudget(uniform(24), 60 * kMiB);
  ASSERT_TRUE(p) << p.status().message();
  EXPECT_EQ(p->segment_starts.size(), 5u);  // four segments need 3 + 60 MiB
  EXPECT_LE(p->peak_bytes, 60 * kMiB);
  // A budget the whole stack fits: no checkpointing at all.
  Result<CheckpointPlan> all = planForBudget(uniform(24), 240 * kMiB);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->segment_starts, (std::vector<size_t>{0}));
  EXPECT_EQ(all->extra_ns, 0);
}

TEST(CheckpointPlanner, LargeLayerGetsItsOwnSegment) {
  std::vector<LayerCost> layers(11, {1 * kMiB, kMiB / 4, 1'000'000});
  layers[5].activation_bytes = 20 * kMiB;                       // e.g. an attention layer that keeps its scores
  Result<CheckpointPlan> p = planForBudget(layers, 21 * kMiB);  // 20 MiB of it, and two boundaries: no room for more
  ASSERT_TRUE(p) << p.status().message();
  const auto& s = p->segment_starts;
  EXPECT_TRUE(std::find(s.begin(), s.end(), 5u) != s.end() && std::find(s.begin(), s.end(), 6u) != s.end())
      << "layer 5 alone";
  EXPECT_LE(p->peak_bytes, 21 * kMiB);
}

TEST(CheckpointPlanner, ImpossibleBudgetsSaySo) {
  Result<CheckpointPlan> p = planForBudget(uniform(24), 5 * kMiB);  // one layer alone needs 10 MiB
  ASSERT_FALSE(p);
  EXPECT_NE(p.status().message().find("no split of 24 layers fits"), std::string::npos) << p.status().message();
  EXPECT_FALSE(planForBudget({}, kMiB));
}

}  // namespace
}  // namespace gpuscope::runtime
