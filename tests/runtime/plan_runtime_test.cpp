// A program asking the plan what to apply: fusion by the recorded kernel names, checkpoint segments, and
// the report of what was applied and what was not; GPUSCOPE_PLAN and bad plans.
#include "advisor/runtime/plan_runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/support/sample_trace.h"

namespace gpuscope::runtime {
namespace {

plan::Plan samplePlan() {
  plan::Plan p;
  p.fixes.push_back(
      {"fusion-1",
       "fusion",
       "fusable_chains",
       {{"kernels", std::vector<std::string>{"add_kernel", "gelu_kernel"}}, {"occurrences_per_step", int64_t{4}}}});
  p.fixes.push_back({"checkpoint-1", "checkpoint", "activation_memory", {{"segments", int64_t{5}}}});
  p.fixes.push_back({"precision-1", "precision", "fp32_gemm", {{"setting", std::string("bf16_autocast")}}});
  p.fixes.push_back({"fusion-2", "fusion", "fusable_chains", {{"kernels", std::vector<std::string>{"a", "b"}}}});
  p.fixes.push_back({"fusion-3",
                     "fusion",
                     "fusable_chains",
                     {{"kernels", std::vector<std::string>{"nvjet_sm90_tst_128x256", "bias", "gelu"}}}});
  return p;
}

TEST(PlanRuntime, AppliesWhatTheProgramAsksForAndReportsTheRest) {
  PlanRuntime plan(samplePlan());
  EXPECT_TRUE(plan.shouldFuse({"add_kernel", "gelu_kernel"}));
  EXPECT_FALSE(plan.shouldFuse({"gelu_kernel", "add_kernel"}));  // order matters: another chain
  EXPECT_EQ(plan.checkpointSegments(), 5);
  EXPECT_TRUE(plan.shouldFuseAfterGemm({"bias", "gelu"}));  // whatever cuBLAS named its GEMM
  EXPECT_FALSE(plan.shouldFuseAfterGemm({"gelu"}));
  const std::string report = plan.report();
  EXPECT_NE(report.find("applied fusion-1 (fusion): 2 kernels fused into one"), std::string::npos) << report;
  EXPECT_NE(report.find("applied checkpoint-1 (checkpoint): 5 checkpoint segments"), std::string::npos) << report;
  EXPECT_NE(report.find("not applied precision-1 (precision): a PyTorch setting"), std::string::npos) << report;
  EXPECT_NE(report.find("not applied fusion-2 (fusion): the program never reached"), std::string::npos) << report;
}

// A chain the program can move into the kernel before it matches whether or not the plan names that kernel.
TEST(PlanRuntime, ChainsMoveIntoTheirProducer) {
  PlanRuntime plan(samplePlan());
  EXPECT_TRUE(plan.shouldFuseIntoProducer({"a", "b"}));        // the chain alone
  EXPECT_TRUE(plan.shouldFuseIntoProducer({"bias", "gelu"}));  // after a GEMM
  EXPECT_FALSE(plan.shouldFuseIntoProducer({"gelu"}));         // part of a chain is not the chain
  const std::string report = plan.report();
  EXPECT_NE(report.find("applied fusion-2 (fusion): 2 kernels moved into the epilogue"), std::string::npos) << report;
  EXPECT_NE(report.find("applied fusion-3 (fusion): 2 kernels moved into the epilogue"), std::string::npos) << report;
}

TEST(PlanRuntime, ReadsGpuscopePlan) {
  testing::TempDir dir;
  ASSERT_TRUE(plan::writePlan(samplePlan(), dir.path("plan.json"), false));
  setenv("GPUSCOPE_PLAN", dir.path("plan.json").c_str(), 1);
  Result<PlanRuntime> from_env = PlanRuntime::fromEnvironment();
  ASSERT_TRUE(from_env) << from_env.status().message();
  EXPECT_EQ(from_env->plan().fixes.size(), 5u);
  testing::writeFile(dir.path("bad.json"), "{\"format\": \"something else\"}");
  setenv("GPUSCOPE_PLAN", dir.path("bad.json").c_str(), 1);
  Result<PlanRuntime> bad = PlanRuntime::fromEnvironment();
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find("not a gpuscope plan"), std::string::npos);
  unsetenv("GPUSCOPE_PLAN");
  Result<PlanRuntime> none = PlanRuntime::fromEnvironment();
  ASSERT_TRUE(none);
  EXPECT_EQ(none->report(), "the plan holds no fixes\n");
}

}  // namespace
}  // namespace gpuscope::runtime
