// An advisor rule: what it reads, when it fires, and the check that turns the context into a finding.
// Rules live in rules_time.cpp (where the step's time goes), rules_kernels.cpp (what the kernels do) and
// rules_memory.cpp (what fills device memory); docs/advisor-rules.md lists them with their thresholds.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "advisor/context.h"
#include "advisor/finding.h"

namespace gpuscope::advisor {

// The fix as code, in each framework's terms ("" where none applies).
struct Snippets {
  std::string_view pytorch, jax, cupy, cuda;
};

// A rule's fixed words live with it; its check measures and fills in the rest (evidence, gain, a title
// with the numbers), and may specialise the words (the fix for a step that already uses CUDA graphs).
struct Rule {
  std::string_view id;          // stable: findings, JSON and plan.json carry it
  std::string_view title;       // what it looks for
  std::string_view reads;       // the analysis it reads
  std::string_view fires_when;  // its threshold, in words
  std::string_view why;         // why it costs
  std::string_view fix;         // the change, in one sentence
  Snippets snippets;
  std::string_view verify;                                  // how to check the change worked
  std::optional<Finding> (*check)(const Context& context);  // null where the forecast fires it (advice.cpp)
};

std::span<const Rule> timeRules();
std::span<const Rule> kernelRules();
std::span<const Rule> memoryRules();
// Rules added since the advisor passed 15 rules live one a file, in advisor/rules/.
const Rule& allocationChurnRule();
const Rule& preallocationRule();
const Rule& stragglerRule();
const Rule& pinnedAllocationRule();
const Rule& managedMemoryMigrationRule();
const Rule& outOfMemoryRiskRule();
const Rule& rankMemoryImbalanceRule();
const Rule& runtimeCompilationRule();
const Rule& loadImbalanceRule();
const Rule& collectiveBandwidthRule();
// Whether NCCL's large operations reach under a quarter of the NVLink's bandwidth (collective_bandwidth's test):
// their time alone on the timeline is then the link's problem, not the overlap's.
bool collectivesFarBelowLink(const Context& context);
std::vector<Rule> allRules();

// host_bound_after_fixes, the launch-bound rule looking ahead: the host's work per step after the other fixes
// against the GPU's (advice.cpp forecasts both), when CUDA graphs would take the difference away.
std::optional<Finding> hostBoundAfterFixes(const Context& context, int64_t gpu_after_ns, int64_t host_after_ns,
                                           int64_t host_with_graphs_ns);
// The launch-bound rule's word where the step already replays CUDA graphs (a note, not a finding).
std::optional<std::string> betweenGraphsNote(const Context& context);
std::optional<std::string> wholeGraphsNote(const Context& context);
std::optional<std::string> nodeLevelGraphsNote(const Context& context);
// The straggler rule's word where a rank arrives last because its host is slower at the same calls (a note).
std::optional<std::string> slowerHostNote(const Context& context);

// Shared by the rules.
// A finding of `rule` with its fixed words, the snippet for the context's framework.
Finding startFinding(const Context& context, const Rule& rule);
// Severity from the gain (set the gain first).
void setSeverity(Finding& finding);
Gain timeGain(const Context& context, int64_t per_step_ns, std::string basis);
TraceRef stepRef(const Context& context);  // the first steady step (or the GPU window)
// "per step" or "in the run", for sentences about per-step figures.
std::string perStepWords(const Context& context);
// A count over n steady windows per step: "623", or "0.5" when it is not a whole number below 10.
std::string perStepCount(int64_t total, int64_t n);
inline std::string perStepCount(const Context& context, int64_t total) {
  return perStepCount(total, context.step.count);
}
// The three largest allocations alive at a device's peak, with who made them: "alive at WHEN: 1.5 GiB by …".
void addLiveAtPeak(Finding& finding, const Context& context, const analysis::DeviceMemory& device,
                   const std::string& when);
// The snippet in the program's own terms: PyTorch, JAX, CuPy, or plain CUDA.
void setSnippet(Fix& fix, const Context& context, const Snippets& snippets);

}  // namespace gpuscope::advisor
