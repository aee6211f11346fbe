// The whole loop on real H100 traces of samples/runtime_mlp (tests/bench/close_the_loop.sh): the advisor
// finds the GEMM + bias + GELU chain and writes it into the plan, the runtime's plan loading says yes to
// exactly that chain, and the trace recorded with the plan applied has nothing left to fix and the
// predicted gain.
#include <gtest/gtest.h>

#include "advisor/advice.h"
#include "advisor/runtime/plan_runtime.h"
#include "tests/support/sample_trace.h"

namespace gpuscope {
namespace {

advisor::Advice adviceOn(const std::string& fixture) {
  Result<analysis::TraceData> trace = analysis::loadTrace(testing::fixturePath(fixture));
  EXPECT_TRUE(trace);
  return trace ? advisor::advise(advisor::buildContext(*trace)) : advisor::Advice{};
}

TEST(CloseTheLoop, AdvisePlanApplyMeasure) {
  const advisor::Advice before = adviceOn("runtime_mlp_before.gpuscope");
  ASSERT_EQ(before.findings.size(), 1u);
  EXPECT_EQ(before.findings[0].id, "fusable_chains");
  testing::TempDir dir;
  ASSERT_TRUE(plan::writePlan(advisor::makePlan(before), dir.path("plan.json"), false));

  Result<runtime::PlanRuntime> plan = runtime::PlanRuntime::fromFile(dir.path("plan.json"));
  ASSERT_TRUE(plan) << plan.status().message();
  EXPECT_TRUE(plan->shouldFuseAfterGemm({"mlp_add_bias", "mlp_gelu"}));  // what the sample asks
  EXPECT_EQ(plan->report().rfind("applied fusion-1", 0), 0u) << plan->report();

  // Recorded with the plan applied: nothing left to fix, and the step as fast as predicted, within 15 %.
  const advisor::Advice after = adviceOn("runtime_mlp_after.gpuscope");
  EXPECT_TRUE(after.findings.empty());
  const double predicted = static_cast<double>(before.predicted.step_time_ns);
  const double measured = static_cast<double>(after.measured.step_time_ns);
  EXPECT_NEAR(measured / predicted, 1.0, 0.15) << "predicted " << predicted << " ns, measured " << measured << " ns";
  EXPECT_LT(measured, 0.5 * static_cast<double>(before.measured.step_time_ns));
}

}  // namespace
}  // namespace gpuscope
