// gpuscope apply's search fix by fix: how the bridge's processes' outcome files are read and when a run failed.
#include "cli/apply_search.h"

#include <gtest/gtest.h>

#include <csignal>
#include <fstream>

#include "tests/support/sample_trace.h"

namespace gpuscope::cli {
namespace {

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// The model's process said the compile was checked; an inductor compile worker, which loads the bridge too and runs
// no model, said it was not applied: the fix made stands. A roll-back in any process (a torchrun job's other rank)
// stands over both.
TEST(ApplySearch, TheProcessThatMadeAFixIsHeardOverOneThatDidNot) {
  testing::TempDir dir;
  write(dir.path("outcome-1.json"), R"({"fixes": {"fusion-1": "checked: Net.forward took 1 ms"},
                                        "results": "results as the run as written: the loss compared"})");
  write(dir.path("outcome-2.json"), R"({"fixes": {"fusion-1": "not applied: no nn.Module's forward ran",
                                                   "precision-1": "not applied: no nn.Module's forward ran"},
                                        "results": ""})");
  write(dir.path("outcome-3.json"), "not json");
  RunOutcome outcome = readOutcome(dir.dir().string());
  EXPECT_EQ(outcome.notes["fusion-1"], "checked: Net.forward took 1 ms");
  EXPECT_EQ(outcome.notes["precision-1"], "not applied: no nn.Module's forward ran");
  ASSERT_EQ(outcome.results.size(), 1u);
  EXPECT_EQ(whyFailed(outcome, 0, 0), "");
  write(dir.path("outcome-4.json"), R"({"fixes": {"fusion-1": "rolled back: slower on rank 1 of 2"}})");
  outcome = readOutcome(dir.dir().string());
  EXPECT_EQ(outcome.notes["fusion-1"], "rolled back: slower on rank 1 of 2");
  EXPECT_EQ(whyFailed(outcome, 0, 0), "fusion-1 rolled back: slower on rank 1 of 2");
}

TEST(ApplySearch, ARunFailsOnAnotherExitCodeOrResultsThatDiffer) {
  RunOutcome outcome;
  EXPECT_EQ(whyFailed(outcome, 1, 0), "exit code 1, the run as written's 0");
  outcome.results = {"results differ: the mean loss of steps 11-20 differs by 102 %"};
  EXPECT_EQ(whyFailed(outcome, 0, 0), "results differ: the mean loss of steps 11-20 differs by 102 %");
  EXPECT_EQ(whyFailed(readOutcome("/nonexistent/gpuscope-outcome"), 0, 0), "");
}

// Ctrl-C or a scheduler's kill ends the program: no search follows. A crash is the plan's failure: one does.
TEST(ApplySearch, ARunStoppedFromOutsideIsNoFailureToSearch) {
  EXPECT_TRUE(stoppedFromOutside(SIGINT));  // a wait status of a process killed by SIGINT
  EXPECT_TRUE(stoppedFromOutside(SIGTERM));
  EXPECT_FALSE(stoppedFromOutside(SIGSEGV));
  EXPECT_FALSE(stoppedFromOutside(SIGABRT));
  EXPECT_FALSE(stoppedFromOutside(1 << 8));  // exited with code 1
}

}  // namespace
}  // namespace gpuscope::cli
