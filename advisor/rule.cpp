#include "advisor/rule.h"

#include <algorithm>

#include "analyzer/units.h"

namespace gpuscope::advisor {

std::vector<Rule> allRules() {
  std::vector<Rule> all;
  for (auto rules : {timeRules(), kernelRules(), memoryRules()}) all.insert(all.end(), rules.begin(), rules.end());
  all.push_back(allocationChurnRule());
  all.push_back(preallocationRule());
  all.push_back(stragglerRule());
  all.push_back(loadImbalanceRule());
  all.push_back(collectiveBandwidthRule());
  all.push_back(pinnedAllocationRule());
  all.push_back(managedMemoryMigrationRule());
  all.push_back(outOfMemoryRiskRule());
  all.push_back(rankMemoryImbalanceRule());
  all.push_back(runtimeCompilationRule());
  return all;
}

Finding startFinding(const Context& context, const Rule& rule) {
  Finding f;
  f.id = std::string(rule.id);
  f.title = std::string(rule.title);
  f.why = std::string(rule.why);
  f.fix.summary = std::string(rule.fix);
  setSnippet(f.fix, context, rule.snippets);
  f.verify = std::string(rule.verify);
  return f;
}

void setSeverity(Finding& finding) { finding.severity = severityForShare(finding.weight()); }

Gain timeGain(const Context& context, int64_t per_step_ns, std::string basis) {
  Gain g;
  // Per-step totals are taken over the steady windows; a fix cannot win more than the whole step.
  g.time_ns = context.step.time_ns > 0 ? std::min(per_step_ns, context.step.time_ns) : per_step_ns;
  g.share_of_step = context.shareOfStep(g.time_ns);
  g.basis = std::move(basis);
  return g;
}

TraceRef stepRef(const Context& context) {
  if (!context.step.windows.empty()) {
    const auto& w = context.step.windows.front();
    return {"time_range", "first steady step", w.start, w.end};
  }
  return {"time_range", "GPU window", context.timeline.window_start_ns, context.timeline.window_end_ns};
}

std::string perStepWords(const Context& context) { return context.step.from_iterations ? "per step" : "in the run"; }

std::string perStepCount(int64_t total, int64_t n) {
  if (n <= 1 || total % n == 0 || total / n >= 10) return analysis::formatCount(total / std::max<int64_t>(1, n));
  const std::string text = analysis::formatFixed(static_cast<double>(total) / static_cast<double>(n), 1);
  return text.ends_with(".0") ? text.substr(0, text.size() - 2) : text;
}

void addLiveAtPeak(Finding& finding, const Context& context, const analysis::DeviceMemory& device,
                   const std::string& when) {
  for (size_t i = 0; i < device.live_at_peak.size() && i < 3; ++i) {
    const analysis::Allocation& a = context.memory.allocations[static_cast<size_t>(device.live_at_peak[i])];
    finding.evidence.push_back(
        {"alive at " + when + ": " + analysis::formatBytes(a.bytes) + " by " + analysis::creatorOf(context.trace, a),
         {{"allocation", "", a.alloc_ns, a.alloc_ns}}});
  }
}

void setSnippet(Fix& fix, const Context& context, const Snippets& snippets) {
  switch (context.framework) {
    case Framework::kPyTorch: fix.snippet = snippets.pytorch, fix.snippet_language = "python"; break;
    case Framework::kJax: fix.snippet = snippets.jax, fix.snippet_language = "python"; break;
    case Framework::kCuPy: fix.snippet = snippets.cupy, fix.snippet_language = "python"; break;
    case Framework::kCuda: fix.snippet = snippets.cuda, fix.snippet_language = "cuda"; break;
  }
  if (fix.snippet.empty()) fix.snippet_language.clear();
}

}  // namespace gpuscope::advisor
