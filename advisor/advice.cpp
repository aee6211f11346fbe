#include "advisor/advice.h"

#include <algorithm>
#include <cmath>

#include "advisor/rule.h"
#include "analyzer/units.h"

namespace gpuscope::advisor {

namespace {

// Fixes overlap (fusing kernels also removes launches), so gains are not added: each fix is taken to win its
// share of the time the previous ones left.
plan::Outcome predict(const Advice& a) {
  double remaining = 1.0;
  int64_t extra = 0, memory = 0;
  for (const Finding& f : a.findings) {
    remaining *= 1.0 - std::clamp(f.gain.share_of_step, 0.0, 0.95);
    extra += f.gain.extra_time_ns;
    memory = std::max(memory, f.gain.memory_bytes);  // memory fixes act on different parts; count the largest
  }
  plan::Outcome p;
  p.step_time_ns = std::llround(static_cast<double>(a.measured.step_time_ns) * remaining) + extra;
  p.peak_memory_bytes = std::max<int64_t>(0, a.measured.peak_memory_bytes - memory);
  return p;
}

std::vector<std::string> notesOn(const Context& c) {
  std::vector<std::string> notes;
  if (c.device == analysis::kNone) notes.push_back("the trace holds no GPU work: nothing to advise on");
  if (!c.step.from_iterations && c.device != analysis::kNone) {
    notes.push_back(
        "no repeating iterations were found: figures are for the whole run (mark each step with an "
        "NVTX range named 'step' to get per-step advice)");
  }
  if (!c.categories.phases_found && !c.memory.allocations.empty()) {
    notes.push_back(
        "no forward/backward/optimizer NVTX ranges: memory is not split into activations, gradients "
        "and optimizer state, so the memory rules did not run");
  }
  for (const std::string& w : c.stats.warnings) notes.push_back("trace: " + w);
  return notes;
}

// With PyTorch's allocator events the peak counts tensors; the caching allocator held more from CUDA.
std::string memoryBasis(const Context& c) {
  const bool tensors = std::any_of(c.memory.allocations.begin(), c.memory.allocations.end(),
                                   [](const analysis::Allocation& x) { return x.tensor; });
  const analysis::DeviceMemory* top = c.memory.peakDevice();
  if (!tensors || !top) return "peak device memory";
  if (top->cuda_peak_bytes == 0)
    return "peak of PyTorch's tensors (what its caching allocator reserved is not in the trace)";
  return "peak of PyTorch's tensors (the caching allocator reserved " + analysis::formatBytes(top->cuda_peak_bytes) +
         " from CUDA)";
}

}  // namespace

Advice advise(const Context& c) {
  Advice a;
  a.trace = c.trace.path;
  a.framework = std::string(toString(c.framework));
  if (c.device != analysis::kNone) a.device = c.trace.deviceLabel(c.device);
  a.step_basis = c.step.basis;
  a.per_step = c.step.from_iterations;
  a.measured = {c.step.time_ns, c.model.measured_peak_bytes};
  a.memory_basis = memoryBasis(c);
  for (const Rule& rule : allRules()) {
    if (c.device == analysis::kNone) break;
    if (std::optional<Finding> f = rule.check(c)) a.findings.push_back(std::move(*f));
  }
  std::stable_sort(a.findings.begin(), a.findings.end(),
                   [](const Finding& x, const Finding& y) { return x.weight() > y.weight(); });
  a.predicted = predict(a);
  a.prediction_basis =
      "each finding's estimated gain, applied one after another to the time the previous left "
      "(fixes overlap, so gains are not added), plus any time a fix costs; peak memory less the "
      "largest memory gain";
  a.notes = notesOn(c);
  a.plots = plotData(c);
  return a;
}

plan::Plan makePlan(const Advice& advice) {
  plan::Plan p;
  p.trace = advice.trace;
  p.step_basis = advice.step_basis;
  p.measured = advice.measured;
  p.predicted = advice.predicted;
  p.prediction_basis = advice.prediction_basis;
  for (const Finding& f : advice.findings) p.fixes.insert(p.fixes.end(), f.fix.plan.begin(), f.fix.plan.end());
  return p;
}

}  // namespace gpuscope::advisor
