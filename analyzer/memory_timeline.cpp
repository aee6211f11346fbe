#include "analyzer/memory_timeline.h"

#include <algorithm>
#include <unordered_map>

#include "analyzer/units.h"

namespace gpuscope::analysis {

namespace {

using schema::MemoryKind;

bool isDeviceMemory(MemoryKind kind) {
  return kind == MemoryKind::kDevice || kind == MemoryKind::kManaged || kind == MemoryKind::kArray;
}

// A leak must grow by at least this much, and by this share of where it started.
constexpr int64_t kMinLeakBytes = 1 << 20;
constexpr double kMinLeakShare = 0.05;
constexpr int kTimeSamples = 8;
// Without iterations, the share of the device's kernels that must run while memory still grows for the growth to
// be read as a leak (samplePoints).
constexpr double kGrowthShareOfKernels = 0.5;
// Growth over fewer intervals is not a leak's evidence: the first steady steps can each make something once
// (transformers' generate with its forward in CUDA graphs: cuBLAS's 32 MiB workspace for the graphs' stream in
// one step, a graph's pool in the next, 156 → 190 MiB over its only 3 steps, then no more).
constexpr size_t kMinLeakIntervals = 3;
constexpr size_t kMaxSuspects = 20;
constexpr int kReadingQuarters = 4;

class Replay {
 public:
  explicit Replay(const TraceData& t)
      : t_(t),
        live_(t.sessions.size()),
        bytes_(t.devices.size(), 0),
        cuda_bytes_(t.devices.size(), 0),
        segment_bytes_(t.devices.size(), 0),
        segment_peak_(t.devices.size(), 0),
        tensors_(t.sessions.size(), false) {
    out_.devices.resize(t.devices.size());
    for (size_t d = 0; d < out_.devices.size(); ++d) out_.devices[d].device = static_cast<int32_t>(d);
    for (size_t i = 0; i < t.allocator.size(); ++i) {
      if (t.allocator.action[i] == schema::AllocatorAction::kAlloc) tensors_[t.allocator.session[i]] = true;
    }
  }

  MemoryAnalysis run() {
    const MemoryTable& m = t_.memory;
    for (size_t i = 0; i < m.size(); ++i) {
      if (!isDeviceMemory(m.kind[i])) continue;
      const bool allocation = m.op[i] == schema::MemoryOp::kAllocation;
      if (tensors_[m.session[i]]) {
        countCuda(m.device[i], allocation ? m.bytes[i] : -m.bytes[i]);  // CUPTI's releases carry their size
      } else if (allocation) {
        allocate(i);
      } else {
        release(m.session[i], m.address[i], m.time_ns[i]);
      }
    }
    replayTensors();
    std::vector<bool> tensor_device(out_.devices.size(), false);
    for (const Allocation& a : out_.allocations) tensor_device[a.device] = tensor_device[a.device] || a.tensor;
    for (DeviceMemory& d : out_.devices) {
      d.end_bytes = bytes_[d.device];
      if (!tensor_device[d.device]) d.cuda_peak_bytes = d.peak_bytes;
      // Without CUDA's own records (an imported snapshot), the allocator's segment events say what it held.
      if (tensor_device[d.device] && d.cuda_peak_bytes == 0) d.cuda_peak_bytes = segment_peak_[d.device];
    }
    return std::move(out_);
  }

 private:
  // Tensor blocks: handed out at alloc, back in the allocator's cache at free_completed.
  void replayTensors() {
    const AllocatorTable& a = t_.allocator;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a.action[i] == schema::AllocatorAction::kAlloc) {
        add({a.session[i], a.device[i], a.address[i], a.bytes[i], a.time_ns[i], kNone, MemoryKind::kDevice, kNone,
             true});
      } else if (a.action[i] == schema::AllocatorAction::kFreeCompleted) {
        release(a.session[i], a.address[i], a.time_ns[i]);
      } else if (a.action[i] == schema::AllocatorAction::kSegmentAlloc ||
                 a.action[i] == schema::AllocatorAction::kSegmentFree) {
        const int32_t d = a.device[i];
        segment_bytes_[d] += a.action[i] == schema::AllocatorAction::kSegmentAlloc ? a.bytes[i] : -a.bytes[i];
        segment_peak_[d] = std::max(segment_peak_[d], segment_bytes_[d]);
      }
    }
  }

  void countCuda(int32_t device, int64_t delta) {
    cuda_bytes_[device] += delta;
    out_.devices[device].cuda_peak_bytes = std::max(out_.devices[device].cuda_peak_bytes, cuda_bytes_[device]);
  }

  void allocate(size_t i) {
    const MemoryTable& m = t_.memory;
    add({m.session[i], m.device[i], m.address[i], m.bytes[i], m.time_ns[i], kNone, m.kind[i], m.call[i]});
  }

  void add(const Allocation& a) {
    // An address allocated twice without a free in between: the free was not recorded.
    if (live_[a.session].count(a.address)) release(a.session, a.address, a.alloc_ns);
    live_[a.session][a.address] = static_cast<int32_t>(out_.allocations.size());
    out_.allocations.push_back(a);
    change(a.device, a.bytes, a.alloc_ns);
  }

  void release(int32_t session, int64_t address, int64_t time) {
    auto it = live_[session].find(address);
    if (it == live_[session].end()) {
      ++out_.unmatched_frees;
      return;
    }
    Allocation& a = out_.allocations[it->second];
    a.free_ns = time;
    live_[session].erase(it);
    change(a.device, -a.bytes, time);
  }

  void change(int32_t device, int64_t delta, int64_t time) {
    DeviceMemory& d = out_.devices[device];
    bytes_[device] += delta;
    d.timeline.push_back({time, bytes_[device]});
    if (bytes_[device] > d.peak_bytes) {
      d.peak_bytes = bytes_[device];
      d.peak_ns = time;
    }
  }

  const TraceData& t_;
  std::vector<std::unordered_map<int64_t, int32_t>> live_;  // per session: address -> allocation
  std::vector<int64_t> bytes_;                              // per device: live bytes now
  std::vector<int64_t> cuda_bytes_;                         // per device: CUDA's bytes, for tensor-level sessions
  std::vector<int64_t> segment_bytes_, segment_peak_;       // per device: the allocator's segments, as it said
  std::vector<bool> tensors_;                               // per session: measured by its tensors
  MemoryAnalysis out_;
};

void findLiveAtPeak(MemoryAnalysis& m) {
  for (DeviceMemory& d : m.devices) {
    if (d.peak_bytes > 0) d.live_at_peak = aliveAt(m, d.device, d.peak_ns);
  }
}

// The share of the device's kernels that start inside [from, to]: 0 without kernels.
double shareOfKernels(const TraceData& t, int32_t device, int64_t from, int64_t to) {
  int64_t all = 0, inside = 0;
  for (size_t k = 0; k < t.kernels.size(); ++k) {
    if (t.kernels.device[k] != device) continue;
    ++all;
    inside += t.kernels.start_ns[k] >= from && t.kernels.start_ns[k] <= to;
  }
  return all > 0 ? static_cast<double>(inside) / static_cast<double>(all) : 0.0;
}

// When to measure: the end of each steady iteration (under `apply --record`, after its check), or even points between
// the first allocation and the last growth. Without iterations, growth that ends before most of the device's kernels
// have run is the program's set-up (weights and buffers allocated once, kept to the end: a cuBLAS MLP's 512 MiB before
// its 200 timed kernels), no leak: no points then.
std::vector<int64_t> samplePoints(const TraceData& t, int32_t device, const std::vector<MemoryPoint>& timeline,
                                  const Iterations& iterations, std::string& basis) {
  std::vector<int64_t> points;
  for (const Iteration& i : iterations.list) {
    // Under `apply --record` the steps up to the end of its check compile, record graphs and run the model as
    // written, each allocating its own once: the program as applied begins after it.
    if (!i.warmup && (!iterations.applied || i.hook_free)) points.push_back(i.end_ns);
  }
  if (points.size() >= 3) {
    basis = "iterations";
    return points;
  }
  points.clear();
  basis = "time";
  if (timeline.size() < 2) return points;
  const int64_t first = timeline.front().time_ns;
  int64_t last_growth = first;
  for (size_t p = 1; p < timeline.size(); ++p) {
    if (timeline[p].live_bytes > timeline[p - 1].live_bytes) last_growth = timeline[p].time_ns;
  }
  if (shareOfKernels(t, device, first, last_growth) < kGrowthShareOfKernels) return points;
  for (int k = 1; k <= kTimeSamples; ++k) points.push_back(first + (last_growth - first) * k / kTimeSamples);
  return points;
}

// Whether the samples grow: they never fall, rise at three intervals in four or more, and by enough.
bool judgeGrowth(LeakCheck& leak) {
  if (leak.samples.size() < kMinLeakIntervals + 1) return false;
  int increases = 0;
  bool never_falls = true;
  for (size_t i = 1; i < leak.samples.size(); ++i) {
    increases += leak.samples[i] > leak.samples[i - 1];
    never_falls = never_falls && leak.samples[i] >= leak.samples[i - 1];
  }
  const int64_t growth = leak.samples.back() - leak.samples.front();
  leak.growth_per_sample_bytes = growth / static_cast<int64_t>(leak.samples.size() - 1);
  leak.growing = never_falls && increases * 4 >= static_cast<int>(leak.samples.size() - 1) * 3 &&
                 growth >= std::max<int64_t>(kMinLeakBytes, static_cast<int64_t>(kMinLeakShare * leak.samples.front()));
  return leak.growing;
}

// XLA's own readings (record --jax) come every few milliseconds at moments of their own, and count an executable's
// scratch while it runs: the least in use in each quarter of the steady steps is what outlives the steps. Without
// steady steps the program's set-up and teardown cannot be told from a leak: no measure.
LeakCheck readingsLeak(const std::vector<MemoryPoint>& in_use, const Iterations& iterations) {
  LeakCheck leak;
  leak.measure = "XLA's bytes in use (memory_stats())";
  int64_t start = 0, end = 0, steps = 0;
  for (const Iteration& i : iterations.list) {
    if (i.warmup) continue;
    start = steps == 0 ? i.start_ns : start;
    end = i.end_ns;
    ++steps;
  }
  if (steps < 8) return leak;
  leak.basis = "the least XLA reading in each quarter of the steady steps";
  leak.steps_per_sample = steps / kReadingQuarters;
  for (int q = 0; q < kReadingQuarters; ++q) {
    const int64_t from = start + (end - start) * q / kReadingQuarters,
                  to = start + (end - start) * (q + 1) / kReadingQuarters;
    int64_t least = liveAt(in_use, from);  // what was in use as the quarter began, unless a reading inside says less
    for (const MemoryPoint& p : in_use) {
      if (p.time_ns > from && p.time_ns <= to) least = std::min(least, p.live_bytes);
    }
    leak.samples.push_back(least);
  }
  judgeGrowth(leak);
  return leak;
}

LeakCheck checkLeak(const TraceData& t, const MemoryAnalysis& m, const Iterations& iterations) {
  LeakCheck leak;
  if (m.devices.empty()) return leak;
  const DeviceMemory& d = *m.peakDevice();
  // Inside XLA's reservation CUDA sees nothing change: where its readings are in the trace, they are the measure.
  if (const std::vector<MemoryPoint> in_use = allocatorInUse(t, d.device); !in_use.empty())
    return readingsLeak(in_use, iterations);
  std::vector<int64_t> points = samplePoints(t, d.device, d.timeline, iterations, leak.basis);
  for (int64_t at : points) leak.samples.push_back(liveAt(d.timeline, at));
  // The last iteration can end in the program's teardown, which frees what it kept: not a step's measure.
  if (leak.basis == "iterations" && leak.samples.size() > 3 && leak.samples.back() < leak.samples.end()[-2]) {
    leak.samples.pop_back();
    points.pop_back();
  }
  if (!judgeGrowth(leak)) return leak;
  for (size_t i = 0; i < m.allocations.size(); ++i) {
    const Allocation& a = m.allocations[i];
    if (a.device == d.device && a.alloc_ns > points.front() && a.aliveAt(points.back())) {
      leak.suspects.push_back(static_cast<int32_t>(i));
    }
  }
  std::stable_sort(leak.suspects.begin(), leak.suspects.end(),
                   [&](int32_t x, int32_t y) { return m.allocations[x].bytes > m.allocations[y].bytes; });
  if (leak.suspects.size() > kMaxSuspects) leak.suspects.resize(kMaxSuspects);
  return leak;
}

}  // namespace

namespace {

// Whether a reading is of the device (an index into TraceData::devices).
bool readingOf(const TraceData& t, const schema::MemoryUsageRow& u, int32_t device) {
  const schema::DeviceRow& d = t.devices[static_cast<size_t>(device)];
  return t.sessions[static_cast<size_t>(u.session_id)].id == d.session_id && u.device_id == d.device_id;
}

}  // namespace

int64_t liveAt(const std::vector<MemoryPoint>& timeline, int64_t t) {
  auto it = std::upper_bound(timeline.begin(), timeline.end(), t,
                             [](int64_t time, const MemoryPoint& p) { return time < p.time_ns; });
  return it == timeline.begin() ? 0 : std::prev(it)->live_bytes;
}

std::vector<MemoryPoint> allocatorInUse(const TraceData& t, int32_t device) {
  std::vector<MemoryPoint> points;
  for (const schema::MemoryUsageRow& u : t.memory_usage) {
    if (readingOf(t, u, device)) points.push_back({u.timestamp_ns, u.in_use_bytes});
  }
  return points;
}

AllocatorUsage allocatorUsage(const TraceData& t, int32_t device) {
  AllocatorUsage usage;
  for (const schema::MemoryUsageRow& u : t.memory_usage) {  // by time
    if (!readingOf(t, u, device)) continue;
    usage.allocator = u.allocator;
    ++usage.readings;
    usage.peak_bytes = std::max({usage.peak_bytes, u.in_use_bytes, u.peak_in_use_bytes.value_or(0)});
    usage.end_bytes = u.in_use_bytes;
    usage.reserved_bytes = std::max(usage.reserved_bytes, u.reserved_bytes.value_or(0));
    usage.limit_bytes = u.limit_bytes.value_or(0);
  }
  return usage;
}

std::vector<int32_t> aliveAt(const MemoryAnalysis& m, int32_t device, int64_t t) {
  std::vector<int32_t> out;
  for (size_t i = 0; i < m.allocations.size(); ++i) {
    const Allocation& a = m.allocations[i];
    if (a.device == device && a.aliveAt(t)) out.push_back(static_cast<int32_t>(i));
  }
  std::stable_sort(out.begin(), out.end(),
                   [&](int32_t x, int32_t y) { return m.allocations[x].bytes > m.allocations[y].bytes; });
  return out;
}

std::string LeakCheck::interval() const {
  if (basis == "iterations") return "iteration";
  return steps_per_sample > 0 ? "quarter of the steady steps" : "eighth of the run";
}

int64_t LeakCheck::growthPerStepBytes() const {
  if (basis == "iterations") return growth_per_sample_bytes;
  return steps_per_sample > 0 ? growth_per_sample_bytes / steps_per_sample : 0;
}

std::string LeakCheck::growthWords() const {
  const int64_t per_step = growthPerStepBytes();
  return per_step > 0 ? formatBytes(per_step) + " per step"
                      : formatBytes(growth_per_sample_bytes) + " per " + interval();
}

bool MemoryAnalysis::hasTensors() const {
  return std::any_of(allocations.begin(), allocations.end(), [](const Allocation& a) { return a.tensor; });
}

const DeviceMemory* MemoryAnalysis::peakDevice() const {
  if (devices.empty()) return nullptr;
  return &*std::max_element(devices.begin(), devices.end(),
                            [](const auto& a, const auto& b) { return a.peak_bytes < b.peak_bytes; });
}

// The peak of each device outside `apply --record`'s calls as written (Iterations::as_written): its timing check
// ran the model in fp32 and without checkpointing there, gpuscope's own calls, which are no peak of the program with
// the plan. What those calls allocated and freed is left out, what lives on after them stays in.
void leaveOutCheckCalls(MemoryAnalysis& m, const Interval& calls) {
  if (calls.end <= calls.start) return;
  for (DeviceMemory& d : m.devices) {
    d.peak_bytes = d.peak_ns = 0;
    for (const MemoryPoint& p : d.timeline) {
      if (p.time_ns >= calls.start && p.time_ns < calls.end) continue;
      if (p.live_bytes > d.peak_bytes) d.peak_bytes = p.live_bytes, d.peak_ns = p.time_ns;
    }
  }
}

MemoryAnalysis analyzeMemory(const TraceData& trace, const Iterations& iterations) {
  MemoryAnalysis m = Replay(trace).run();
  leaveOutCheckCalls(m, iterations.as_written);
  findLiveAtPeak(m);
  m.leak = checkLeak(trace, m, iterations);
  return m;
}

int32_t innermostRange(const TraceData& t, int32_t session, int64_t thread, int64_t time,
                       bool (*accept)(std::string_view name)) {
  const NvtxTable& n = t.nvtx;
  auto it = std::upper_bound(n.start_ns.begin(), n.start_ns.end(), time);
  // Walk back over the ranges that started before t; the first still open is the innermost. Bounded, so a
  // trace of millions of short ranges cannot make one question slow.
  for (int steps = 0; it != n.start_ns.begin() && steps < 100'000; ++steps) {
    const size_t r = static_cast<size_t>(--it - n.start_ns.begin());
    if (n.kind[r] == schema::NvtxKind::kRange && n.session[r] == session &&
        (thread == kAnyThread || n.thread_id[r] == thread) && n.end_ns[r] > time &&
        (!accept || accept(t.text(n.name[r])))) {
      return static_cast<int32_t>(r);
    }
  }
  return kNone;
}

std::string creatorOf(const TraceData& trace, const Allocation& a) {
  auto in = [&](int32_t range) {
    return range == kNone ? "" : " in NVTX range '" + trace.text(trace.nvtx.name[range]) + "'";
  };
  if (a.tensor)
    return "a block the allocator handed out" + in(innermostRange(trace, a.session, kAnyThread, a.alloc_ns));
  if (a.call == kNone) return "an allocation CUDA made itself (no API call recorded)";
  const ApiTable& api = trace.api_calls;
  return trace.text(api.name[a.call]) +
         in(innermostRange(trace, a.session, api.thread_id[a.call], api.start_ns[a.call]));
}

}  // namespace gpuscope::analysis
