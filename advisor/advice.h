// The advisor's answer for one trace: the findings, ranked by what fixing each would win, and the step
// time and peak memory measured and predicted after all fixes, with the bases of both.
#pragma once

#include <string>
#include <vector>

#include "advisor/context.h"
#include "advisor/finding.h"
#include "advisor/plots.h"
#include "formats/plan.h"

namespace gpuscope::advisor {

// What the plan is for: a faster step (fixes that cost time, such as recomputation, are left out), a smaller
// peak (fixes that cost time are in), or both.
enum class Goal { kTime, kMemory, kBoth };
std::string_view toString(Goal goal);  // "time", "memory", "both"
bool parseGoal(std::string_view text, Goal& out);

struct Advice {
  std::string trace;                                // path of the trace
  std::string framework;                            // "PyTorch", "JAX", "CuPy", "CUDA"
  std::string device;                               // "GPU 0 (NVIDIA H100 80GB HBM3)"; "" with no GPU work
  std::string step_basis;                           // how the step was measured
  std::string memory_basis = "peak device memory";  // what the peak counts
  bool per_step = false;                            // times are per iteration (false: for the whole run)
  plan::Outcome measured;                           // step time, peak device memory
  plan::Outcome predicted;                          // after every finding's fix
  Goal goal = Goal::kTime;                          // what the plan is for
  plan::Outcome plan_predicted;                     // after the plan's fixes (those gpuscope applies, for the goal)
  int plan_fixes = 0;                               // findings whose fixes are in the plan
  std::string prediction_basis;
  std::string run_failed;  // why the recorded program failed; no prediction or plan is made then ("": it did not)
  std::vector<Finding> findings;          // most to least to gain
  std::vector<std::string> notes;         // what limits the advice (no iterations, no phases, data-quality warnings)
  analysis::JobView job;                  // the job's ranks, when the trace holds several; `device` is one of them
  std::vector<std::string> rank_devices;  // per job.ranks entry, its device's label
  PlotData plots;                         // for the HTML report

  const Finding* find(std::string_view id) const;  // the first finding of that rule, nullptr if none
};

Advice advise(const Context& context, Goal goal = Goal::kTime);
// The step time and peak memory predicted after the fixes of the given findings (Advice::predicted is this
// for all of them): the GPU's busy and idle time less the fixes' gains, and no less than the host's work.
plan::Outcome predictOutcome(const Context& context, const std::vector<const Finding*>& findings);
// The fixes of the findings in the plan, for `gpuscope apply` and the PyTorch bridge.
plan::Plan makePlan(const Advice& advice);

}  // namespace gpuscope::advisor
