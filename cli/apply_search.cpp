#include "cli/apply_search.h"

#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "collector/launcher.h"
#include "formats/plan.h"

namespace gpuscope::cli {

namespace fs = std::filesystem;

namespace {

bool startsWith(const std::string& text, std::string_view prefix) { return text.rfind(prefix, 0) == 0; }

// Which of two processes' notes on a fix stands: a roll-back anywhere, then a fix made ("applied", "checked",
// "not checked"), then what a process that made none said ("not applied", "waiting").
int weight(const std::string& note) {
  if (startsWith(note, "rolled back")) return 3;
  if (startsWith(note, "applied") || startsWith(note, "checked") || startsWith(note, "not checked")) return 2;
  return 1;
}

// The finding (its rule) that proposed a fix; its kind in a plan that names none.
const std::string& findingOf(const plan::Fix& fix) { return fix.rule.empty() ? fix.kind : fix.rule; }

// The plan's fixes by the finding that proposed them, in the plan's order: what one try adds.
std::vector<std::vector<plan::Fix>> byFinding(const std::vector<plan::Fix>& fixes) {
  std::vector<std::vector<plan::Fix>> groups;
  std::map<std::string, size_t> index;
  for (const plan::Fix& fix : fixes) {
    auto [it, added] = index.emplace(findingOf(fix), groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(fix);
  }
  return groups;
}

std::string namesOf(const std::vector<plan::Fix>& group) {
  std::string out = findingOf(group.front()) + " (";
  for (size_t i = 0; i < group.size(); ++i) out += (i ? ", " : "") + group[i].id;
  return out + ")";
}

struct Try {
  RunOutcome outcome;
  std::string failed;    // why it failed, "" when it did not
  bool stopped = false;  // stopped from outside: the search ends
};

// One run with FIXES: what it said of them, and why it failed.
Try tryFixes(const std::vector<std::string>& command, plan::Plan subset, const std::string& dir,
             int exit_code_as_written) {
  fs::create_directories(dir + "/outcome");
  const std::string path = dir + "/plan.json";
  if (Status written = plan::writePlan(subset, path, true); !written) return {{}, written.message()};
  setenv("GPUSCOPE_APPLY_OUTCOME", (dir + "/outcome").c_str(), 1);
  Result<int> status = collector::runWithPlan(command, path, "", dir + "/output.log");
  if (!status) return {{}, status.status().message()};
  Try t{readOutcome(dir + "/outcome"), "", stoppedFromOutside(*status)};
  t.failed = whyFailed(t.outcome, collector::exitCodeOf(*status), exit_code_as_written);
  return t;
}

// What the try said of a group it kept: its first fix's note (one change stands for the group's fixes), and of
// the results.
std::string saidOf(const RunOutcome& outcome, const std::vector<plan::Fix>& group) {
  auto it = outcome.notes.find(group.front().id);
  std::string said = it == outcome.notes.end() ? "not applied: the program said nothing of it" : it->second;
  return outcome.results.empty() ? said : said + "; " + outcome.results.front();
}

}  // namespace

bool stoppedFromOutside(int wait_status) {
  if (!WIFSIGNALED(wait_status)) return false;
  const int sig = WTERMSIG(wait_status);
  return sig == SIGINT || sig == SIGTERM || sig == SIGKILL || sig == SIGHUP || sig == SIGQUIT;
}

RunOutcome readOutcome(const std::string& dir) {
  RunOutcome out;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    std::ifstream in(entry.path());
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (!j.is_object()) continue;
    if (j.contains("fixes") && j["fixes"].is_object()) {
      for (const auto& [id, note] : j["fixes"].items()) {
        if (!note.is_string()) continue;
        std::string& mine = out.notes[id];
        if (mine.empty() || weight(note.get<std::string>()) > weight(mine)) mine = note.get<std::string>();
      }
    }
    if (j.contains("results") && j["results"].is_string() && !j["results"].get<std::string>().empty()) {
      out.results.push_back(j["results"].get<std::string>());
    }
  }
  return out;
}

std::string whyFailed(const RunOutcome& outcome, int exit_code, int exit_code_as_written) {
  if (exit_code != exit_code_as_written) {
    return "exit code " + std::to_string(exit_code) + ", the run as written's " + std::to_string(exit_code_as_written);
  }
  for (const auto& [id, note] : outcome.notes) {
    if (startsWith(note, "rolled back")) return id + " " + note;
  }
  for (const std::string& results : outcome.results) {
    if (startsWith(results, "results differ")) return results;
  }
  return "";
}

void searchFixByFix(const std::vector<std::string>& command, const std::string& plan_path, const std::string& work_dir,
                    int exit_code_as_written, const std::string& why, double budget_s) {
  Result<plan::Plan> whole = plan::readPlan(plan_path);
  if (!whole) return;
  const std::vector<std::vector<plan::Fix>> groups = byFinding(whole->fixes);
  if (groups.size() < 2) return;  // one finding's fixes: nothing smaller to try
  std::fprintf(stderr,
               "gpuscope apply: fix by fix: the plan as a whole failed (%s); running the program again with one "
               "finding's fixes at a time, on top of those that pass, for up to %.0f s (--search-budget; the runs' "
               "output: %s)\n",
               why.c_str(), budget_s, work_dir.c_str());
  const auto started = std::chrono::steady_clock::now();
  plan::Plan verified = *whole;
  verified.fixes.clear();
  verified.prediction_basis =
      "the whole plan's prediction (this verified plan holds the fixes of it that passed "
      "one by one): " +
      whole->prediction_basis;
  for (size_t g = 0; g < groups.size(); ++g) {
    const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (spent >= budget_s) {
      std::fprintf(stderr, "gpuscope apply: fix by fix: not tried, the budget spent: %s\n", namesOf(groups[g]).c_str());
      continue;
    }
    plan::Plan subset = verified;
    subset.fixes.insert(subset.fixes.end(), groups[g].begin(), groups[g].end());
    const auto [outcome, failed, stopped] =
        tryFixes(command, subset, work_dir + "/try-" + std::to_string(g + 1), exit_code_as_written);
    if (stopped) {
      std::fprintf(stderr, "gpuscope apply: fix by fix: stopped from outside while trying %s: no verified plan\n",
                   namesOf(groups[g]).c_str());
      return;
    }
    if (!failed.empty()) {
      std::fprintf(stderr, "gpuscope apply: fix by fix: dropped %s: %s\n", namesOf(groups[g]).c_str(), failed.c_str());
      continue;
    }
    const std::string said = saidOf(outcome, groups[g]);
    if (weight(said) < 2) {  // it passed without being made: nothing to keep
      std::fprintf(stderr, "gpuscope apply: fix by fix: dropped %s: %s\n", namesOf(groups[g]).c_str(), said.c_str());
      continue;
    }
    std::fprintf(stderr, "gpuscope apply: fix by fix: kept %s: %s\n", namesOf(groups[g]).c_str(), said.c_str());
    for (plan::Fix fix : groups[g]) {
      fix.params.push_back({"verified", said});
      verified.fixes.push_back(std::move(fix));
    }
  }
  if (verified.fixes.empty()) {
    std::fprintf(stderr, "gpuscope apply: fix by fix: no finding's fixes passed: no verified plan written\n");
    return;
  }
  const fs::path out = fs::path(plan_path).replace_extension(".verified.json");
  if (Status written = plan::writePlan(verified, out.string(), true); !written) {
    std::fprintf(stderr, "gpuscope apply: fix by fix: %s\n", written.message().c_str());
    return;
  }
  std::fprintf(stderr,
               "gpuscope apply: fix by fix: wrote %s: %zu of the plan's %zu fixes, each with what its run said "
               "(gpuscope apply --plan %s)\n",
               out.c_str(), verified.fixes.size(), whole->fixes.size(), out.c_str());
}

}  // namespace gpuscope::cli
