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
};

Advice advise(const Context& context);
// The fixes of every finding that has some, for `gpuscope apply` and the PyTorch bridge.
plan::Plan makePlan(const Advice& advice);

}  // namespace gpuscope::advisor
