// gpuscope apply, fix by fix: when the plan as a whole fails (a fix rolled back, results that differ from the run
// as written, another exit code), the program runs again with one finding's fixes at a time, in the plan's order
// (the advisor's, the largest expected gain first), each on top of those that passed, while the time budget
// lasts. The fixes that passed are written as a verified plan beside the plan, each with what its run said of it.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace gpuscope::cli {

// What the PyTorch bridge's processes said of one run (GPUSCOPE_APPLY_OUTCOME/outcome-PID.json).
struct RunOutcome {
  std::map<std::string, std::string> notes;  // fix id -> the last note: "applied: …", "checked: …", "rolled back: …"
  std::vector<std::string> results;          // each process's verdict on its results ("results differ: …")
};

// Reads every process's outcome file in DIR; of the processes' notes on a fix, a roll-back wins, then a fix made.
RunOutcome readOutcome(const std::string& dir);

// Why a run failed, in words, or "" when it did not: a fix rolled back, results that differ, an exit code other
// than the run as written's.
std::string whyFailed(const RunOutcome& outcome, int exit_code, int exit_code_as_written);

// Whether a run was stopped from outside (Ctrl-C, a scheduler's SIGTERM or SIGKILL, a closed terminal): no search
// follows such a run, and one stops at it.
bool stoppedFromOutside(int wait_status);

// The search, after a run with the plan that failed for WHY; says on stderr what it kept, what it dropped and why.
// Each run's output goes to WORK_DIR; the verified plan to PLAN's name with ".verified.json".
void searchFixByFix(const std::vector<std::string>& command, const std::string& plan, const std::string& work_dir,
                    int exit_code_as_written, const std::string& why, double budget_s);

}  // namespace gpuscope::cli
