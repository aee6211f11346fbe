// plan.json: what advise --plan writes is what the runtime reads back, it matches formats/plan.schema.json,
// and a file that is not a plan of this version gets one clear error.
#include "formats/plan.h"

#include <gtest/gtest.h>

#include "tests/support/sample_trace.h"

namespace gpuscope::plan {
namespace {

using testing::TempDir;

Plan samplePlan() {
  Plan p;
  p.trace = "runs/naive.gpuscope";
  p.step_basis = "median of 9 steady iterations (NVTX 'step')";
  p.measured = {17'400'000, 1'517'000'000};
  p.predicted = {9'100'000, 1'517'000'000};
  p.prediction_basis = "step time less each finding's estimated gain";
  p.fixes.push_back({"fusion-1",
                     "fusion",
                     "fusable_chains",
                     {{"kernels", std::vector<std::string>{"add_kernel", "mul_kernel", "gelu_kernel"}},
                      {"occurrences_per_step", int64_t{48}}}});
  p.fixes.push_back({"precision-1", "precision", "fp32_gemm", {{"setting", std::string("bf16_autocast")}}});
  p.fixes.push_back({"data_loader-1",
                     "data_loader",
                     "input_pipeline",
                     {{"num_workers", int64_t{8}}, {"pin_memory", true}, {"persistent_workers", true}}});
  return p;
}

TEST(Plan, RoundTrip) {
  TempDir dir;
  const Plan p = samplePlan();
  ASSERT_TRUE(writePlan(p, dir.path("plan.json"), false));
  Result<Plan> back = readPlan(dir.path("plan.json"));
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_EQ(back->trace, p.trace);
  EXPECT_EQ(back->measured.step_time_ns, 17'400'000);
  EXPECT_EQ(back->predicted.peak_memory_bytes, 1'517'000'000);
  ASSERT_EQ(back->fixes.size(), 3u);
  const Value* kernels = back->fixes[0].param("kernels");
  ASSERT_NE(kernels, nullptr);
  EXPECT_EQ(std::get<std::vector<std::string>>(*kernels).size(), 3u);
  EXPECT_EQ(std::get<int64_t>(*back->fixes[0].param("occurrences_per_step")), 48);
  EXPECT_EQ(std::get<std::string>(*back->fixes[1].param("setting")), "bf16_autocast");
  EXPECT_TRUE(std::get<bool>(*back->fixes[2].param("pin_memory")));
  EXPECT_EQ(back->fixes[2].param("nothing"), nullptr);
  EXPECT_EQ(toJson(*back), toJson(p));
}

TEST(Plan, MatchesItsSchema) {
  TempDir dir;
  ASSERT_TRUE(writePlan(samplePlan(), dir.path("plan.json"), false));
  EXPECT_EQ(testing::jsonSchemaProblem("formats/plan.schema.json", dir.path("plan.json")), "");
  // The schema is not a rubber stamp: an unknown kind breaks it.
  std::string text = testing::readFile(dir.path("plan.json"));
  text.replace(text.find("\"precision\""), 11, "\"overclock\"");
  testing::writeFile(dir.path("bad.json"), text);
  EXPECT_NE(testing::jsonSchemaProblem("formats/plan.schema.json", dir.path("bad.json")), "");
}

TEST(Plan, BadFilesGetOneClearError) {
  TempDir dir;
  const struct {
    const char* text;
    const char* expected;
  } cases[] = {
      {"", "not a valid plan"},
      {"[1, 2]", "not a gpuscope plan"},
      {R"({"format": "gpuscope-plan", "version": 2, "fixes": []})", "plan version 2"},
      {R"({"format": "gpuscope-plan", "version": 1})", "no \"fixes\" array"},
      {R"({"format": "gpuscope-plan", "version": 1, "fixes": [{"id": "x", "kind": "overclock"}]})",
       "unknown fix kind 'overclock'"},
      {R"({"format": "gpuscope-plan", "version": 1, "fixes": [{"id": "x", "kind": "fusion", "kernels": [1]}]})",
       "parameter 'kernels'"},
      {R"({"format": "gpuscope-plan", "version": 1, "fixes": [{"id": "x", "kind": "allocator", "variable": "LD_PRELOAD",
           "setting": "/tmp/x.so"}]})",
       "unknown allocator variable \"LD_PRELOAD\""},
      {R"({"format": "gpuscope-plan", "version": 1, "fixes": [], "measured": {"step_time_ns": "fast"}})",
       "not a valid plan"},
  };
  for (const auto& c : cases) {
    testing::writeFile(dir.path("p.json"), c.text);
    Result<Plan> p = readPlan(dir.path("p.json"));
    ASSERT_FALSE(p) << c.text;
    EXPECT_NE(p.status().message().find(c.expected), std::string::npos) << p.status().message();
  }
  EXPECT_FALSE(readPlan(dir.path("missing.json")));
}

TEST(Plan, WritingKeepsTheOldFileWhenItCannot) {
  TempDir dir;
  ASSERT_TRUE(writePlan(samplePlan(), dir.path("plan.json"), false));
  const std::string before = testing::readFile(dir.path("plan.json"));
  EXPECT_FALSE(writePlan(samplePlan(), dir.path("no/such/dir/plan.json"), true));
  EXPECT_FALSE(writePlan(Plan{}, dir.path("plan.json"), false));  // exists, and no overwrite asked for
  EXPECT_EQ(testing::readFile(dir.path("plan.json")), before);
  EXPECT_TRUE(writePlan(Plan{}, dir.path("plan.json"), true));
  EXPECT_NE(testing::readFile(dir.path("plan.json")), before);
}

}  // namespace
}  // namespace gpuscope::plan
