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

struct Advice {
  std::string trace;                                // path of the trace
  std::string framework;                            // "PyTorch", "JAX", "CuPy", "CUDA"
  std::string device;                               // "GPU 0 (NVIDIA H100 80GB HBM3)"; "" with no GPU work
  std::string step_basis;                           // how the step was measured
  std::string memory_basis = "peak device memory";  // what the peak counts
  bool per_step = false;                            // times are per iteration (false: for the whole run)
  plan::Outcome measured;                           // step time, peak device memory
  plan::Outcome predicted;                          // after every finding's fix
  plan::Outcome plan_predicted;                     // after the fixes the plan applies without a code change
  std::string prediction_basis;
  std::vector<Finding> findings;   // most to least to gain
  std::vector<std::string> notes;  // what limits the advice (no iterations, no phases, data-quality warnings)
  PlotData plots;                  // for the HTML report

  const Finding* find(std::string_view id) const;  // the first finding of that rule, nullptr if none
};

Advice advise(const Context& context);
// The step time and peak memory predicted after the fixes of the given findings (Advice::predicted is this
// for all of them): the GPU's busy and idle time less the fixes' gains, and no less than the host's work.
plan::Outcome predictOutcome(const Context& context, const std::vector<const Finding*>& findings);
// The fixes of every finding that has some, for `gpuscope apply` and the PyTorch bridge.
plan::Plan makePlan(const Advice& advice);

}  // namespace gpuscope::advisor
