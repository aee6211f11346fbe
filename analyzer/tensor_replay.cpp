#include "analyzer/tensor_replay.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "analyzer/intervals.h"
#include "analyzer/kernel_classifier.h"
#include "analyzer/paused_steps.h"
#include "analyzer/phases.h"

namespace gpuscope::analysis {

std::string blockOf(const std::string& module) {
  for (size_t dot = module.find('.'); dot != std::string::npos; dot = module.find('.', dot + 1)) {
    const size_t end = std::min(module.find('.', dot + 1), module.size());
    const auto first = module.begin() + static_cast<std::ptrdiff_t>(dot) + 1;
    const auto last = module.begin() + static_cast<std::ptrdiff_t>(end);
    if (first != last && std::all_of(first, last, [](char ch) { return ch >= '0' && ch <= '9'; })) {
      return module.substr(0, end);
    }
  }
  return "";
}

namespace {

constexpr int64_t kForever = std::numeric_limits<int64_t>::max();

// Each block's forward and backward ranges (the bridge's module ranges of the block itself), in start order.
struct BlockRanges {
  std::vector<Interval> forward, backward;
};

std::map<std::string, BlockRanges> blockRanges(const TraceData& t, int32_t session) {
  std::map<std::string, BlockRanges> blocks;
  const NvtxTable& n = t.nvtx;
  for (size_t r = 0; r < n.size(); ++r) {
    if (n.kind[r] != schema::NvtxKind::kRange || n.session[r] != session) continue;
    const std::string& name = t.text(n.name[r]);
    if (!isModuleRange(name)) continue;
    Phase phase;
    const std::string module = moduleOfRange(name, phase);
    if (blockOf(module) != module) continue;
    auto& list = phase == Phase::kForward ? blocks[module].forward : blocks[module].backward;
    list.push_back({n.start_ns[r], n.end_ns[r]});
  }
  return blocks;
}

// Where an activation was made: its block's forward range (an index into that block's list), if any.
struct Made {
  const BlockRanges* block = nullptr;
  size_t forward = 0;
};

Made madeIn(const TraceData& t, const std::map<std::string, BlockRanges>& blocks, const Allocation& a) {
  const int32_t r = innermostRange(t, a.session, kAnyThread, a.alloc_ns, isModuleRange);
  if (r == kNone) return {};
  Phase phase;
  auto it = blocks.find(blockOf(moduleOfRange(t.text(t.nvtx.name[r]), phase)));
  if (phase != Phase::kForward || it == blocks.end()) return {};
  const std::vector<Interval>& fw = it->second.forward;
  const Interval* w = lastStartingBy(fw, a.alloc_ns);
  if (!w || a.alloc_ns >= w->end) return {};
  return {&it->second, static_cast<size_t>(w - fw.data())};
}

// The peak of the live bytes inside a window of time and outside it.
struct WindowPeaks {
  int64_t inside = 0, outside = 0;
};

// Moments inside `unjudged` (the steps the PyTorch bridge timed with recording paused) count for neither: their
// kernels are not in the trace, so which of their tensors a compiler keeps on chip cannot be told, and they repeat
// the recorded steps around them.
WindowPeaks peaksAround(std::vector<std::pair<int64_t, int64_t>>& changes, const Interval& window,
                        const Interval& unjudged) {
  std::sort(changes.begin(), changes.end());  // at one moment, frees (negative) first
  int64_t live = 0;
  WindowPeaks p;
  for (const auto& [time, bytes] : changes) {
    live += bytes;
    if (unjudged.holds(time)) continue;
    int64_t& peak = time >= window.start && time < window.end ? p.inside : p.outside;
    peak = std::max(peak, live);
  }
  return p;
}

// Per allocation: when checkpointing ends its first life (kForever: as recorded) and when its recomputation
// makes it again (kForever: never); `window` is the time the blocks' ranges span. Returns the number of blocks
// checkpointed.
int64_t checkpointLives(const TraceData& trace, const MemoryAnalysis& memory, const MemoryCategories& categories,
                        int32_t device, std::vector<int64_t>& until, std::vector<int64_t>& again, Interval& window) {
  const int32_t session = memory.allocations[static_cast<size_t>(memory.peakDevice()->live_at_peak.front())].session;
  const std::map<std::string, BlockRanges> blocks = blockRanges(trace, session);
  window = {kForever, 0};
  for (const auto& [name, b] : blocks) {
    for (const std::vector<Interval>* list : {&b.forward, &b.backward}) {
      for (const Interval& r : *list) window = {std::min(window.start, r.start), std::max(window.end, r.end)};
    }
  }
  // The activations of each block's forward call, and the last one made (its output, which stays).
  std::map<std::pair<const BlockRanges*, size_t>, std::vector<size_t>> calls;
  for (size_t i = 0; i < memory.allocations.size(); ++i) {
    const Allocation& a = memory.allocations[i];
    if (a.device != device || !a.tensor || categories.of_allocation[i] != MemoryCategory::kActivations) continue;
    if (const Made m = madeIn(trace, blocks, a); m.block) calls[{m.block, m.forward}].push_back(i);
  }
  std::map<const BlockRanges*, bool> replayed;
  for (const auto& [call, members] : calls) {
    const BlockRanges& b = *call.first;
    const int64_t forward_end = b.forward[call.second].end;
    auto next = std::lower_bound(b.backward.begin(), b.backward.end(), forward_end,
                                 [](const Interval& r, int64_t t) { return r.start < t; });
    for (size_t k = 0; k + 1 < members.size(); ++k) {  // members are in allocation order; the last stays
      until[members[k]] = forward_end;
      if (next != b.backward.end()) again[members[k]] = next->start;
    }
    replayed[call.first] = replayed[call.first] || members.size() > 1;
  }
  return std::count_if(replayed.begin(), replayed.end(), [](const auto& r) { return r.second; });
}

// Per allocation: whether a compiler would keep it on chip. PyTorch allocates an op's output just before
// launching the kernel that writes it, and frees a tensor after its readers. A tensor written by a kernel a
// compiler fuses, during whose whole life only such kernels were launched, lives inside one run of fusable
// kernels, which the compiler makes one kernel. One that lives across a GEMM, a convolution or a library
// call (its reader, or a reader of something after it) is still written out.
std::vector<bool> livedAmongFusableKernels(const TraceData& t, const MemoryAnalysis& memory) {
  const std::vector<KernelKind> kinds = classifyConfigs(t);
  struct Launches {
    std::vector<int64_t> at;         // launch call starts, in order
    std::vector<int32_t> unfusable;  // unfusable[i]: how many of the first i kernels a compiler does not fuse
  };
  std::map<int32_t, Launches> by_session;
  std::vector<std::pair<int64_t, size_t>> order;
  for (size_t k = 0; k < t.kernels.size(); ++k) {
    if (const int32_t call = t.kernels.launch_call[k]; call != kNone) {
      order.push_back({t.api_calls.start_ns[static_cast<size_t>(call)], k});
    }
  }
  std::sort(order.begin(), order.end());
  for (const auto& [at, k] : order) {
    Launches& l = by_session[t.kernels.session[k]];
    if (l.unfusable.empty()) l.unfusable.push_back(0);
    const bool fusable = kinds[t.kernels.config[k]].fusable();
    l.at.push_back(at);
    l.unfusable.push_back(l.unfusable.back() + (fusable ? 0 : 1));
  }
  std::vector<bool> out(memory.allocations.size(), false);
  for (size_t i = 0; i < out.size(); ++i) {
    const Allocation& a = memory.allocations[i];
    auto l = by_session.find(a.session);
    if (a.free_ns == kNone || l == by_session.end()) continue;
    const Launches& s = l->second;
    const auto first = std::lower_bound(s.at.begin(), s.at.end(), a.alloc_ns) - s.at.begin();
    const auto end = std::lower_bound(s.at.begin(), s.at.end(), a.free_ns) - s.at.begin();
    out[i] = first < end && s.unfusable[static_cast<size_t>(end)] == s.unfusable[static_cast<size_t>(first)];
  }
  return out;
}

// The tensors' births and deaths on `device` after the changes: (time, +bytes) and (time, -bytes).
std::vector<std::pair<int64_t, int64_t>> changedTimeline(const MemoryAnalysis& memory,
                                                         const MemoryCategories& categories, int32_t device,
                                                         const MemoryChanges& what, const std::vector<bool>& fused,
                                                         const std::vector<int64_t>& until,
                                                         const std::vector<int64_t>& again) {
  std::vector<std::pair<int64_t, int64_t>> changes;
  for (size_t i = 0; i < memory.allocations.size(); ++i) {
    const Allocation& a = memory.allocations[i];
    if (a.device != device) continue;
    const MemoryCategory category = categories.of_allocation[i];
    if (a.tensor && fused[i] && category == MemoryCategory::kTemporaries) continue;
    const bool scaled = a.tensor && category == MemoryCategory::kActivations;
    const auto bytes = scaled ? static_cast<int64_t>(static_cast<double>(a.bytes) * what.activation_scale) : a.bytes;
    const int64_t free = a.free_ns == kNone ? kForever : a.free_ns;
    changes.push_back({a.alloc_ns, bytes});
    changes.push_back({std::min(free, until[i]), -bytes});
    if (again[i] < free) changes.push_back({again[i], bytes}), changes.push_back({free, -bytes});
  }
  return changes;
}

}  // namespace

std::optional<TensorReplay> replayTensors(const TraceData& trace, const MemoryAnalysis& memory,
                                          const MemoryCategories& categories, const MemoryChanges& what) {
  const DeviceMemory* top = memory.peakDevice();
  if (!top || top->live_at_peak.empty()) return std::nullopt;
  const size_t n = memory.allocations.size();
  const std::vector<int64_t> as_recorded(n, kForever);
  std::vector<int64_t> until = as_recorded, again = as_recorded;
  Interval window{0, kForever};
  TensorReplay out;
  if (what.checkpoint_blocks) {
    out.blocks = checkpointLives(trace, memory, categories, top->device, until, again, window);
    if (out.blocks < 2) out.blocks = 0, until = as_recorded, again = as_recorded;
  }
  const std::vector<bool> fused =
      what.drop_temporaries ? livedAmongFusableKernels(trace, memory) : std::vector<bool>(n);
  std::vector<std::pair<int64_t, int64_t>> changes =
      changedTimeline(memory, categories, top->device, what, fused, until, again);
  const int32_t session = memory.allocations[static_cast<size_t>(top->live_at_peak.front())].session;
  const std::optional<PausedSteps> paused = pausedSteps(trace, session);
  const Interval unjudged = paused ? paused->paused : Interval{0, 0};
  const WindowPeaks after = peaksAround(changes, window, unjudged);
  // What the paused steps peaked above the recorded ones stays: the replay changes only what it can judge.
  int64_t judged = 0;
  for (const MemoryPoint& p : top->timeline) {
    if (!unjudged.holds(p.time_ns)) judged = std::max(judged, p.live_bytes);
  }
  const int64_t unjudged_above = paused ? std::max<int64_t>(0, top->peak_bytes - judged) : 0;
  if (out.blocks == 0) {
    out.peak_bytes = std::max(after.inside, after.outside) + unjudged_above;
    return out;
  }
  // Outside the blocks' ranges are steps without module ranges (the bridge's hook-free steps, where it took its
  // hooks off): nothing there can be placed in a block, so their peak shrinks as the annotated steps' did.
  std::vector<std::pair<int64_t, int64_t>> unchanged =
      changedTimeline(memory, categories, top->device, what, fused, as_recorded, as_recorded);
  const WindowPeaks before = peaksAround(unchanged, window, unjudged);
  const double shrink = before.inside > 0 ? static_cast<double>(after.inside) / static_cast<double>(before.inside) : 1;
  out.peak_bytes =
      std::max(after.inside, static_cast<int64_t>(static_cast<double>(before.outside) * shrink)) + unjudged_above;
  return out;
}

}  // namespace gpuscope::analysis
