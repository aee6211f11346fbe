#include "analyzer/memory_categories.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "analyzer/phases.h"

namespace gpuscope::analysis {

namespace {

// Where in the program a moment falls: set-up, a phase of an iteration (and which iteration), or after.
class PhaseMap {
 public:
  PhaseMap(const TraceData& t, const Iterations& iterations)
      : iterations_(iterations), ranges_(phaseRanges(t, iterations.session)) {
    for (const PhaseRange& r : ranges_) {
      if (r.phase == Phase::kBackward) with_backward_.push_back(iterationAt(r.start));
    }
    std::sort(with_backward_.begin(), with_backward_.end());
  }
  bool phasesFound() const { return !ranges_.empty(); }
  // Whether the run annotates backward passes, but not iteration i's: the PyTorch bridge removes its module
  // hooks after a few steps (record --torch-steps), and the later steps show their forward only.
  bool backwardUnannotated(int64_t i) const {
    return !with_backward_.empty() && !std::binary_search(with_backward_.begin(), with_backward_.end(), i);
  }

  // -1 before the first iteration, list.size() after the last.
  int64_t iterationAt(int64_t t) const {
    const auto& list = iterations_.list;
    if (list.empty() || t < list.front().start_ns) return -1;
    auto it =
        std::upper_bound(list.begin(), list.end(), t, [](int64_t x, const Iteration& i) { return x < i.start_ns; });
    const auto index = static_cast<int64_t>(std::prev(it) - list.begin());
    return t < std::prev(it)->end_ns || it != list.end() ? index : static_cast<int64_t>(list.size());
  }

  Phase phaseAt(int64_t t) const {
    const int64_t i = iterationAt(t);
    if (i < 0) return Phase::kSetup;
    if (i >= static_cast<int64_t>(iterations_.list.size())) return Phase::kAfter;
    auto it =
        std::upper_bound(ranges_.begin(), ranges_.end(), t, [](int64_t x, const PhaseRange& r) { return x < r.start; });
    while (it != ranges_.begin()) {
      --it;
      if (it->end > t) return it->phase;
      if (t - it->start > kLookBackNs) break;
    }
    return Phase::kNoPhase;
  }

 private:
  static constexpr int64_t kLookBackNs = 600'000'000'000;  // ten minutes: no phase is longer
  const Iterations& iterations_;
  std::vector<PhaseRange> ranges_;      // in start order (NVTX rows are sorted by start)
  std::vector<int64_t> with_backward_;  // iterations holding a backward range, sorted
};

MemoryCategory categoryOf(const Allocation& a, const PhaseMap& phases) {
  const Phase made = phases.phaseAt(a.alloc_ns);
  const bool kept = a.free_ns == kNone || phases.phaseAt(a.free_ns) == Phase::kAfter ||
                    phases.iterationAt(a.free_ns) > phases.iterationAt(a.alloc_ns) + 1;
  if (made == Phase::kSetup)
    return kept || a.free_ns == kNone ? MemoryCategory::kParameters : MemoryCategory::kTemporaries;
  if (made == Phase::kAfter) return MemoryCategory::kTemporaries;
  const Phase freed = a.free_ns == kNone ? Phase::kAfter : phases.phaseAt(a.free_ns);
  const bool same_iteration = a.free_ns != kNone && phases.iterationAt(a.free_ns) == phases.iterationAt(a.alloc_ns);
  switch (made) {
    case Phase::kOptimizer: return kept ? MemoryCategory::kOptimizerState : MemoryCategory::kTemporaries;
    case Phase::kBackward:  // gradients outlive the backward pass (till zero_grad, or for good)
      return kept || freed != Phase::kBackward || !same_iteration ? MemoryCategory::kGradients
                                                                  : MemoryCategory::kTemporaries;
    case Phase::kForward:
      // Where the step's backward is not annotated, what its forward made and the same step freed outside any
      // phase was freed by the backward: activations (a checkpointed MLP's 2.8 GiB of them were "other").
      if (same_iteration && (freed == Phase::kBackward ||
                             (freed == Phase::kNoPhase && phases.backwardUnannotated(phases.iterationAt(a.free_ns)))))
        return MemoryCategory::kActivations;
      if (same_iteration && freed == Phase::kForward) return MemoryCategory::kTemporaries;
      return MemoryCategory::kOther;
    default: return kept ? MemoryCategory::kOther : MemoryCategory::kTemporaries;
  }
}

MemoryCategory categoryOfRole(schema::TensorRole role) {
  switch (role) {
    case schema::TensorRole::kGradient: return MemoryCategory::kGradients;
    case schema::TensorRole::kOptimizerState: return MemoryCategory::kOptimizerState;
    default: return MemoryCategory::kParameters;  // parameters and buffers
  }
}

// What the PyTorch bridge saw each tensor to be: a role applies to the tensor block that held its address
// when it was seen. Blocks are found by their start address (storages start their block; a view into a
// larger block is found when no other block ever started between the two).
std::vector<std::optional<MemoryCategory>> namedCategories(const TraceData& t, const MemoryAnalysis& m) {
  std::vector<std::optional<MemoryCategory>> named(m.allocations.size());
  std::map<std::pair<int32_t, int64_t>, std::vector<int32_t>> blocks;  // (session, start) → allocations by time
  for (size_t i = 0; i < m.allocations.size(); ++i) {
    if (m.allocations[i].tensor)
      blocks[{m.allocations[i].session, m.allocations[i].address}].push_back(static_cast<int32_t>(i));
  }
  const TensorRoleTable& r = t.roles;
  for (size_t k = 0; k < r.size(); ++k) {
    auto it = blocks.upper_bound({r.session[k], r.address[k]});
    if (it == blocks.begin() || (--it)->first.first != r.session[k]) continue;
    for (auto a = it->second.rbegin(); a != it->second.rend(); ++a) {
      const Allocation& block = m.allocations[*a];
      if (block.alloc_ns > r.time_ns[k]) continue;
      if (block.aliveAt(r.time_ns[k]) && r.address[k] < block.address + block.bytes) {
        named[*a] = categoryOfRole(r.role[k]);
      }
      break;
    }
  }
  return named;
}

// Each category's allocations, its share of the device's peak, and its own peak, from the series.
void measureUsage(const MemoryAnalysis& memory, int32_t device, MemoryCategories& c) {
  for (size_t i = 0; i < memory.allocations.size(); ++i) {
    const Allocation& a = memory.allocations[i];
    if (a.device != device) continue;
    ++c.usage[static_cast<size_t>(c.of_allocation[i])].allocations;
    if (a.aliveAt(memory.devices[device].peak_ns)) {
      c.usage[static_cast<size_t>(c.of_allocation[i])].at_device_peak_bytes += a.bytes;
    }
  }
  const CategorySeries series = categorySeries(memory, c);
  for (size_t k = 0; k < series.bytes.size(); ++k) {
    CategoryUsage& u = c.usage[k];
    for (size_t p = 0; p < series.time.size(); ++p) {
      if (series.bytes[k][p] > u.peak_bytes) u.peak_bytes = series.bytes[k][p], u.peak_ns = series.time[p];
    }
  }
}

}  // namespace

bool reservesHalfTheGpu(const TraceData& t, int32_t device, int64_t bytes) {
  if (device < 0 || static_cast<size_t>(device) >= t.devices.size()) return false;
  const int64_t gpu = t.devices[static_cast<size_t>(device)].global_memory_bytes;
  return gpu > 0 && static_cast<double>(bytes) >= kReservationShare * static_cast<double>(gpu);
}

MemoryCategories categorizeMemory(const TraceData& trace, const Iterations& iterations, const MemoryAnalysis& memory) {
  MemoryCategories c;
  for (int i = 0; i < kMemoryCategoryCount; ++i) c.usage[i].category = static_cast<MemoryCategory>(i);
  const PhaseMap phases(trace, iterations);
  c.phases_found = phases.phasesFound();
  const std::vector<std::optional<MemoryCategory>> named = namedCategories(trace, memory);
  c.roles_found = std::any_of(named.begin(), named.end(), [](const auto& n) { return n.has_value(); });
  const bool by_lifetime = !c.phases_found && !c.roles_found;
  for (size_t i = 0; i < memory.allocations.size(); ++i) {
    const Allocation& a = memory.allocations[i];
    // Without phases or tensor roles only an allocation's lifetime tells what it is, and what stays from set-up
    // is taken for weights; an allocator's reservation is not.
    const bool reservation = by_lifetime && !a.tensor && reservesHalfTheGpu(trace, a.device, a.bytes);
    c.reservations_found |= reservation;
    c.of_allocation.push_back(named[i] ? *named[i] : reservation ? MemoryCategory::kOther : categoryOf(a, phases));
  }
  if (const DeviceMemory* top = memory.peakDevice()) measureUsage(memory, top->device, c);
  return c;
}

std::string_view toString(MemoryCategory category) {
  static constexpr std::array<std::string_view, kMemoryCategoryCount> kNames = {
      "parameters", "gradients", "optimizer_state", "activations", "temporaries", "other"};
  return kNames[static_cast<size_t>(category)];
}

CategorySeries categorySeries(const MemoryAnalysis& memory, const MemoryCategories& categories, int32_t device) {
  CategorySeries s;
  const DeviceMemory* top = memory.peakDevice();
  if (!top) return s;
  if (device == kNone) device = top->device;
  struct Change {
    int64_t time, bytes;
    size_t category;
  };
  std::vector<Change> changes;
  for (size_t i = 0; i < memory.allocations.size(); ++i) {
    const Allocation& a = memory.allocations[i];
    if (a.device != device) continue;
    const auto c =
        static_cast<size_t>(i < categories.of_allocation.size() ? categories.of_allocation[i] : MemoryCategory::kOther);
    changes.push_back({a.alloc_ns, a.bytes, c});
    if (a.free_ns != kNone) changes.push_back({a.free_ns, -a.bytes, c});
  }
  // Frees before allocations at the same moment, so a reuse does not count twice.
  std::stable_sort(changes.begin(), changes.end(), [](const Change& x, const Change& y) {
    return x.time != y.time ? x.time < y.time : x.bytes < y.bytes;
  });
  std::array<int64_t, kMemoryCategoryCount> live{};
  for (const Change& ch : changes) {
    live[ch.category] += ch.bytes;
    s.time.push_back(ch.time);
    int64_t total = 0;
    for (size_t c = 0; c < live.size(); ++c) s.bytes[c].push_back(live[c]), total += live[c];
    if (total > s.peak_total) s.peak_total = total, s.peak_time = ch.time;
  }
  return s;
}

std::array<int64_t, kMemoryCategoryCount> CategorySeries::at(int64_t t) const {
  std::array<int64_t, kMemoryCategoryCount> out{};
  const auto n = static_cast<size_t>(std::upper_bound(time.begin(), time.end(), t) - time.begin());
  if (n == 0) return out;
  for (size_t c = 0; c < out.size(); ++c) out[c] = bytes[c][n - 1];
  return out;
}

}  // namespace gpuscope::analysis
