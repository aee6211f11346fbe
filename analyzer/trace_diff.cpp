#include "analyzer/trace_diff.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "analyzer/iterations.h"
#include "analyzer/job.h"
#include "analyzer/memory_timeline.h"
#include "analyzer/stats.h"

namespace gpuscope::analysis {

namespace {

// Kernel time and launches by name and by class, over the iterations the step is timed on (divided by their
// number) or, without iterations, over the whole run.
struct Side {
  std::map<std::string, std::pair<double, double>> by_name;   // name -> (time ns, count)
  std::map<std::string, std::pair<double, double>> by_class;  // "class precision" -> (time ns, count)
};

Side measure(const TraceData& t, const std::vector<KernelKind>& kinds, const Iterations& iterations,
             bool per_iteration) {
  Side side;
  const std::vector<bool> timed = timedIterations(iterations);
  const double divisor = per_iteration ? static_cast<double>(std::count(timed.begin(), timed.end(), true)) : 1.0;
  std::vector<std::string> class_of_config;
  for (const KernelKind& kind : kinds) {
    std::string label(toString(kind.cls));
    if (kind.precision != Precision::kUnknown) label += " " + std::string(toString(kind.precision));
    class_of_config.push_back(label);
  }
  for (size_t k = 0; k < t.kernels.size(); ++k) {
    if (per_iteration) {
      const int32_t i = iterations.steadyIterationAt(t.kernels.start_ns[k]);
      if (i == kNone || static_cast<size_t>(i) >= timed.size() || !timed[static_cast<size_t>(i)]) continue;
    }
    const double d = static_cast<double>(t.kernels.end_ns[k] - t.kernels.start_ns[k]) / divisor;
    auto& n = side.by_name[t.kernelName(k)];
    n.first += d, n.second += 1.0 / divisor;
    auto& c = side.by_class[class_of_config[t.kernels.config[k]]];
    c.first += d, c.second += 1.0 / divisor;
  }
  return side;
}

std::vector<KernelChange> compare(const std::map<std::string, std::pair<double, double>>& before,
                                  const std::map<std::string, std::pair<double, double>>& after) {
  std::set<std::string> keys;
  for (const auto& [k, v] : before) keys.insert(k);
  for (const auto& [k, v] : after) keys.insert(k);
  std::vector<KernelChange> rows;
  for (const std::string& k : keys) {
    const auto b = before.count(k) ? before.at(k) : std::pair<double, double>{0, 0};
    const auto a = after.count(k) ? after.at(k) : std::pair<double, double>{0, 0};
    rows.push_back({k, {b.first, a.first}, {b.second, a.second}});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const KernelChange& x, const KernelChange& y) {
    return std::fabs(x.time_ns.delta()) > std::fabs(y.time_ns.delta());
  });
  return rows;
}

double highestPeak(const MemoryAnalysis& memory) {
  int64_t peak = 0;
  for (const DeviceMemory& d : memory.devices) peak = std::max(peak, d.peak_bytes);
  return static_cast<double>(peak);
}

Change changeOf(int64_t before, int64_t after) { return {static_cast<double>(before), static_cast<double>(after)}; }

// The ranks of both jobs, matched by rank.
void compareJobs(const JobView& before, const JobView& after, TraceDiff& diff) {
  if (before.ranks.empty() || after.ranks.empty()) return;
  diff.job_step_ns = changeOf(before.step_ns, after.step_ns);
  for (const RankStep& b : before.ranks) {
    const auto a =
        std::find_if(after.ranks.begin(), after.ranks.end(), [&](const RankStep& x) { return x.rank == b.rank; });
    if (a == after.ranks.end()) continue;
    diff.ranks.push_back({b.rank, changeOf(b.step_ns, a->step_ns), changeOf(b.compute_ns, a->compute_ns),
                          changeOf(b.comm_alone_ns, a->comm_alone_ns),
                          changeOf(b.comm_overlapped_ns, a->comm_overlapped_ns), changeOf(b.idle_ns, a->idle_ns),
                          changeOf(b.host_ns, a->host_ns)});
  }
}

}  // namespace

TraceDiff diffTraces(const TraceData& before, const TraceData& after) {
  TraceDiff diff;
  const Iterations it_before = findIterations(before), it_after = findIterations(after);
  const int64_t step_before = stepNs(it_before), step_after = stepNs(it_after);
  diff.per_iteration = step_before > 0 && step_after > 0;
  const std::vector<KernelKind> kinds_before = classifyConfigs(before), kinds_after = classifyConfigs(after);
  const Side b = measure(before, kinds_before, it_before, diff.per_iteration);
  const Side a = measure(after, kinds_after, it_after, diff.per_iteration);
  if (diff.per_iteration) {
    diff.iteration_ns = {static_cast<double>(step_before), static_cast<double>(step_after)};
  }
  const MemoryAnalysis mb = analyzeMemory(before, it_before), ma = analyzeMemory(after, it_after);
  diff.peak_memory_bytes = {highestPeak(mb), highestPeak(ma)};
  compareJobs(analyzeJob(before, kinds_before, mb), analyzeJob(after, kinds_after, ma), diff);
  const Stats sb = computeStats(before), sa = computeStats(after);
  diff.gpu_busy_ns = {static_cast<double>(sb.summary.gpu_busy_ns), static_cast<double>(sa.summary.gpu_busy_ns)};
  diff.duration_ns = {static_cast<double>(sb.summary.duration_ns), static_cast<double>(sa.summary.duration_ns)};
  diff.kernel_count = {static_cast<double>(sb.summary.kernel_count), static_cast<double>(sa.summary.kernel_count)};
  diff.classes = compare(b.by_class, a.by_class);
  diff.kernels = compare(b.by_name, a.by_name);
  for (const KernelChange& k : diff.kernels) {
    if (k.count.before == 0 && k.count.after > 0) diff.appeared.push_back(k.name);
    if (k.count.after == 0 && k.count.before > 0) diff.disappeared.push_back(k.name);
  }
  return diff;
}

std::string percentText(const Change& c) {
  if (c.before == 0) return c.after == 0 ? "" : "new";
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f %%", 100.0 * (c.after - c.before) / c.before);
  return text;
}

}  // namespace gpuscope::analysis
