#include "analyzer/timeline_analysis.h"

#include <algorithm>
#include <map>
#include <string_view>

#include "analyzer/gpu_activity.h"
#include "analyzer/memory_timeline.h"
#include "analyzer/phases.h"

namespace gpuscope::analysis {

namespace {

struct WorkItem {
  int64_t start = 0;
  // When the host had issued it: the end of its launch call (or the work's start, if that came first: a
  // synchronous copy's call ends after the copy); kNone when the call was not recorded. A tiny kernel whose
  // launch call began before the GPU ran dry but ended after was not queued: the host was still launching.
  int64_t launch = kNone;
  bool pageable_copy = false;
  bool read_back = false;  // a copy from the device to the host
  int64_t thread = kNone;  // the thread that issued it, where its call was recorded
};

// Every kernel, copy and memset of each device in start order, with when it was launched.
std::vector<std::vector<WorkItem>> workByDevice(const TraceData& t) {
  std::vector<std::vector<WorkItem>> work(t.devices.size());
  auto add = [&](const GpuWorkColumns& c, size_t i, bool pageable, bool read_back = false) {
    const int32_t call = c.launch_call[i];
    const int64_t issued = call == kNone ? kNone : std::min(t.api_calls.end_ns[call], c.start_ns[i]);
    const int64_t thread = call == kNone ? kNone : t.api_calls.thread_id[call];
    work[c.device[i]].push_back({c.start_ns[i], issued, pageable, read_back, thread});
  };
  for (size_t i = 0; i < t.kernels.size(); ++i) add(t.kernels, i, false);
  for (size_t i = 0; i < t.copies.size(); ++i) {
    add(t.copies, i,
        t.copies.src_kind[i] == schema::MemoryKind::kPageable || t.copies.dst_kind[i] == schema::MemoryKind::kPageable,
        t.copies.kind[i] == schema::CopyKind::kDeviceToHost);
  }
  for (size_t i = 0; i < t.memsets.size(); ++i) add(t.memsets, i, false);
  for (auto& w : work) {
    std::stable_sort(w.begin(), w.end(), [](const WorkItem& a, const WorkItem& b) { return a.start < b.start; });
  }
  return work;
}

bool isSynchronousCopy(const std::string& name) {
  return name.find("emcpy") != std::string::npos && name.find("Async") == std::string::npos;
}

// A call in which the host waits for the GPU: a synchronize call or a synchronous copy.
bool waitsForGpu(const std::string& name) {
  return name.find("ynchronize") != std::string::npos || isSynchronousCopy(name);
}

// A launch call takes a few microseconds (2-10 µs on an H100, recorded). One that takes far longer waited: for
// a free slot in the GPU's launch queue, full while the GPU runs far behind the host (a 2-rank DDP job's
// rank 0, stalled in all-reduces for its late peer, spent 245 ms in 186 such calls), or, on a kernel's first
// launch, for its module to load.
constexpr int64_t kBlockedLaunchNs = 100'000;

bool blockedLaunch(const std::string& name, int64_t duration_ns) {
  return duration_ns >= kBlockedLaunchNs && name.find("aunch") != std::string::npos;
}

// cudaMalloc, cudaMallocPitch, cudaFree, cuMemAlloc_v2, cuMemFree_v2, …: not the stream-ordered (Async) nor
// the pinned host (Host) ones. Allocators that map memory themselves (XLA's, PyTorch's expandable segments) call
// the driver's virtual memory API instead: cuMemCreate and cuMemMap to allocate, cuMemUnmap and cuMemRelease to
// free.
bool allocatesDeviceMemory(std::string_view name) {
  const bool alloc = name.starts_with("cudaMalloc") || name.starts_with("cudaFree") || name.starts_with("cuMemAlloc") ||
                     name.starts_with("cuMemFree");
  const bool mapped = name.starts_with("cuMemCreate") || name.starts_with("cuMemMap") ||
                      name.starts_with("cuMemUnmap") || name.starts_with("cuMemRelease") ||
                      name.starts_with("cuMemSetAccess") || name.starts_with("cuMemAddress");
  return mapped ||
         (alloc && name.find("Async") == std::string_view::npos && name.find("Host") == std::string_view::npos);
}

bool freesDeviceMemory(std::string_view name) {
  return allocatesDeviceMemory(name) && (name.find("Free") != std::string_view::npos ||
                                         name.starts_with("cuMemUnmap") || name.starts_with("cuMemRelease"));
}

// An allocator that frees memory the GPU may still use synchronises first: cudaFree does so inside the call,
// XLA's platform allocator calls cuCtxSynchronize and then cuMemUnmap. A wait whose thread's next call frees
// device memory is that allocator's, not the program's reading a result.
std::vector<bool> allocatorSyncs(const TraceData& t) {
  std::vector<bool> marked(t.api_calls.size(), false);
  std::map<std::pair<int32_t, int64_t>, size_t> last;  // (session, thread) -> its latest call
  const ApiTable& a = t.api_calls;
  for (size_t i = 0; i < a.size(); ++i) {  // in the order each thread made them
    const std::string& name = t.text(a.name[i]);
    auto [prev, inserted] = last.try_emplace({a.session[i], a.thread_id[i]}, i);
    if (!inserted) {
      if (freesDeviceMemory(name) && waitsForGpu(t.text(a.name[prev->second]))) marked[prev->second] = true;
      prev->second = i;
    }
  }
  return marked;
}

// Between two of an allocator's calls on one thread, with no other CUDA call between, the allocator does its own
// bookkeeping (XLA's platform allocator on an H200: 99 % of such gaps under 84 us). A gap longer than this is
// the program's work, not the allocator's.
constexpr int64_t kAllocatorGapNs = 100'000;

// Per process: the stretches its threads spent allocating and freeing device memory: the calls, the allocator's
// synchronisations before freeing (allocator_syncs, per call), and the host's time between consecutive such calls;
// merged, sorted.
std::vector<std::vector<Interval>> allocatorStretches(const TraceData& t, const std::vector<bool>& allocator_syncs) {
  std::vector<std::vector<Interval>> stretches(t.sessions.size());
  struct Latest {
    size_t call;
    bool allocator;
  };
  std::map<std::pair<int32_t, int64_t>, Latest> last;  // (session, thread) -> its latest call
  const ApiTable& a = t.api_calls;
  for (size_t i = 0; i < a.size(); ++i) {
    const bool allocator = allocator_syncs[i] || allocatesDeviceMemory(t.text(a.name[i]));
    auto [prev, inserted] = last.try_emplace({a.session[i], a.thread_id[i]}, Latest{i, allocator});
    if (allocator) {
      const bool follows =
          !inserted && prev->second.allocator && a.start_ns[i] - a.end_ns[prev->second.call] <= kAllocatorGapNs;
      stretches[a.session[i]].push_back({follows ? a.start_ns[prev->second.call] : a.start_ns[i], a.end_ns[i]});
    }
    prev->second = {i, allocator};
  }
  for (auto& list : stretches) list = mergeIntervals(std::move(list));
  return stretches;
}

// Per API call: whether the host waited in it for the GPU's work before it, by its name (synchronize calls,
// synchronous copies) or by what it did: a copy from the device into pageable memory returns once the data is
// there, whatever its call's name. CuPy reads a scalar back with cudaMemcpyAsync: a k-means's convergence test
// waited 8.2 ms in it every iteration (bench/corpus/cupy_kmeans, H200, 2026-11-28).
// The waits of a compiler (XLA's autotuner timing its candidates, annotatedCompiles) are none of the program's.
std::vector<bool> waitsForGpuCalls(const TraceData& t) {
  const ApiTable& a = t.api_calls;
  const std::vector<bool> compiling = callsInCompiles(t);
  std::vector<bool> waits(a.size(), false);
  for (size_t i = 0; i < a.size(); ++i) waits[i] = !compiling[i] && waitsForGpu(t.text(a.name[i]));
  const CopyTable& c = t.copies;
  for (size_t i = 0; i < c.size(); ++i) {
    if (c.launch_call[i] != kNone && !compiling[static_cast<size_t>(c.launch_call[i])] &&
        c.kind[i] == schema::CopyKind::kDeviceToHost && c.dst_kind[i] == schema::MemoryKind::kPageable) {
      waits[static_cast<size_t>(c.launch_call[i])] = true;
    }
  }
  return waits;
}

// hostSyncEnds, with the allocators' synchronisations (allocator_syncs, per call) left out.
std::vector<std::vector<int64_t>> syncEnds(const TraceData& t, const std::vector<bool>& allocator_syncs) {
  std::vector<std::vector<int64_t>> ends(t.sessions.size());
  std::vector<bool> has_api_calls(t.sessions.size(), false);
  const std::vector<bool> waits = waitsForGpuCalls(t);
  const ApiTable& a = t.api_calls;
  for (size_t i = 0; i < a.size(); ++i) {
    has_api_calls[a.session[i]] = true;
    if (waits[i] && !allocator_syncs[i]) ends[a.session[i]].push_back(a.end_ns[i]);
  }
  const SyncTable& s = t.syncs;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!has_api_calls[s.session[i]] && s.kind[i] != schema::SyncKind::kStreamWaitEvent) {
      ends[s.session[i]].push_back(s.end_ns[i]);
    }
  }
  for (auto& list : ends) std::sort(list.begin(), list.end());
  return ends;
}

}  // namespace

std::vector<Interval> deviceAllocationCalls(const TraceData& t, int32_t session) {
  if (session < 0 || static_cast<size_t>(session) >= t.sessions.size()) return {};
  return allocatorStretches(t, allocatorSyncs(t))[static_cast<size_t>(session)];
}

namespace {

bool pinsHostMemory(std::string_view call) {
  for (std::string_view name :
       {"cudaHostAlloc", "cudaMallocHost", "cudaFreeHost", "cudaHostRegister", "cudaHostUnregister", "cuMemHostAlloc",
        "cuMemAllocHost", "cuMemFreeHost", "cuMemHostRegister", "cuMemHostUnregister"}) {
    if (call.starts_with(name)) return true;
  }
  return false;
}

}  // namespace

std::vector<Interval> hostPinningCalls(const TraceData& t, int32_t session) {
  std::vector<Interval> calls;
  const ApiTable& a = t.api_calls;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a.session[i] == session && pinsHostMemory(t.text(a.name[i]))) calls.push_back({a.start_ns[i], a.end_ns[i]});
  }
  return mergeIntervals(std::move(calls));
}

bool recordedByCollector(const schema::SessionRow& session) {
  // Imports say where they come from in the command line; only the collector asks CUPTI for its version.
  return session.cupti_version.has_value() && !session.command_line.starts_with("imported from");
}

std::optional<int64_t> measuredRecordingCost(const TraceData& trace) {
  for (const schema::DataQualityRow& row : trace.data_quality) {
    if (row.code == "recording_cost_per_launch" && !row.session_id) return row.count;
  }
  return std::nullopt;
}

int64_t recordingCostPerLaunch(const TraceData& trace, int32_t session) {
  return recordingCostPerLaunch(trace, session, pausedStepsCost(trace, session));
}

int64_t recordingCostPerLaunch(const TraceData& trace, int32_t session, const std::optional<PausedStepsCost>& own) {
  if (session < 0 || static_cast<size_t>(session) >= trace.sessions.size() ||
      !recordedByCollector(trace.sessions[static_cast<size_t>(session)])) {
    return 0;
  }
  const int64_t machine = measuredRecordingCost(trace).value_or(kRecordingCostPerLaunchNs);
  // What the process's own paused steps measured is the least recording cost it: CUPTI's cost does not all go
  // with its records switched off (pt_launch_bound_module on an H200: 7.77 ms a step paused, 9.10 recorded, 5.0-6.7
  // plain, docs/benchmarks.md), and where the GPU set the steps' pace both ran at its pace.
  return own ? std::max(own->per_launch_ns, machine) : machine;
}

namespace {

// A launch call made while the host runs this far ahead of the GPU (its kernel starts that long after the call
// returns) is queued behind a millisecond of work: when it takes longer than a launch does, it waited for a slot
// in the GPU's launch queue, by less than kBlockedLaunchNs when the kernels retiring ahead of it are short. A
// GPU-bound attention model launched 570 kernels a step in 34 µs each on average against 8.4 at the median, and
// those waits counted as 29.8 ms of host work in a 49.7 ms step: the advisor foresaw its host setting the pace
// after the fixes, which its twin (the fix by hand, 22.0 ms a step plain) disproved (bench/corpus/
// pt_manual_attention, H200, 2026-11-29).
constexpr int64_t kHostAheadNs = 1'000'000;

// Of each launch call of a process queued that far behind and longer than twice the process's median launch
// call, the part beyond that median: the host waiting, not working.
std::vector<Interval> queueWaits(const TraceData& t, int32_t session) {
  std::vector<int64_t> launched_at(t.api_calls.size(), -1), durations;
  const KernelTable& k = t.kernels;
  for (size_t i = 0; i < k.size(); ++i) {
    const int32_t call = k.launch_call[i];
    if (call == kNone || t.api_calls.session[static_cast<size_t>(call)] != session) continue;
    int64_t& at = launched_at[static_cast<size_t>(call)];
    at = at < 0 ? k.start_ns[i] : std::min(at, k.start_ns[i]);
  }
  const ApiTable& a = t.api_calls;
  for (size_t i = 0; i < a.size(); ++i) {
    if (launched_at[i] >= 0) durations.push_back(a.end_ns[i] - a.start_ns[i]);
  }
  if (durations.empty()) return {};
  const int64_t typical = summarize(durations).median;
  std::vector<Interval> waits;
  for (size_t i = 0; i < a.size(); ++i) {
    if (launched_at[i] - a.end_ns[i] >= kHostAheadNs && a.end_ns[i] - a.start_ns[i] > 2 * typical) {
      waits.push_back({a.start_ns[i] + typical, a.end_ns[i]});
    }
  }
  return waits;
}

}  // namespace

std::vector<Interval> hostWaitCalls(const TraceData& t, int32_t session) {
  std::vector<Interval> waits = queueWaits(t, session);
  const std::vector<bool> waits_for_gpu = waitsForGpuCalls(t);
  const ApiTable& a = t.api_calls;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a.session[i] != session) continue;
    if (waits_for_gpu[i] || blockedLaunch(t.text(a.name[i]), a.end_ns[i] - a.start_ns[i])) {
      waits.push_back({a.start_ns[i], a.end_ns[i]});
    }
  }
  return mergeIntervals(std::move(waits));
}

std::vector<Interval> cudaCalls(const TraceData& t, int32_t session) {
  std::vector<Interval> calls;
  const ApiTable& a = t.api_calls;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a.session[i] == session) calls.push_back({a.start_ns[i], a.end_ns[i]});
  }
  return mergeIntervals(std::move(calls));
}

std::vector<Interval> awayStretches(const std::vector<Interval>& calls, int64_t start, int64_t end, int64_t min_gap) {
  std::vector<Interval> away;
  auto call =
      std::lower_bound(calls.begin(), calls.end(), start, [](const Interval& x, int64_t t) { return x.end < t; });
  for (int64_t from = start; from < end; ++call) {
    const int64_t to = call == calls.end() ? end : std::min(call->start, end);
    if (to - from >= min_gap) away.push_back({from, to});
    if (call == calls.end()) break;
    from = std::max(from, call->end);
  }
  return away;
}

std::vector<std::vector<int64_t>> hostSyncEnds(const TraceData& t) { return syncEnds(t, allocatorSyncs(t)); }

std::vector<std::pair<std::string, int64_t>> syncsByModule(const TraceData& t, int32_t session,
                                                           const std::vector<int64_t>& sync_ends, int64_t until_ns) {
  std::map<int32_t, int64_t> by_name;  // string id of the range's name
  for (int64_t end : sync_ends) {
    if (until_ns >= 0 && end >= until_ns) break;  // sorted
    const int32_t range = innermostRange(t, session, kAnyThread, end, isModuleRange);
    if (range != kNone) ++by_name[t.nvtx.name[static_cast<size_t>(range)]];
  }
  std::vector<std::pair<std::string, int64_t>> out;
  for (const auto& [name, count] : by_name) out.emplace_back(t.text(name), count);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

namespace {

// Per process: when the host stopped waiting for the GPU, and the host's copy calls and device allocation
// calls, as intervals.
struct HostWaits {
  std::vector<std::vector<int64_t>> sync_ends, allocator_sync_ends;
  std::vector<std::vector<Interval>> copy_calls, alloc_calls;
  std::vector<std::vector<Interval>> compiles;  // annotatedCompiles
  // The compilers' own stretches before a module load (runtimeCompiles, `compiled`): numba's or NVRTC's compile of
  // a kernel at its first launch, cuDNN's runtime fusion. The GPU waits on them, whatever came before.
  std::vector<std::vector<Interval>> compiler_stretches;
};

HostWaits hostWaits(const TraceData& t) {  // one pass over the calls, for every process
  const std::vector<bool> allocator_syncs = allocatorSyncs(t);
  HostWaits w{syncEnds(t, allocator_syncs), std::vector<std::vector<int64_t>>(t.sessions.size()),
              std::vector<std::vector<Interval>>(t.sessions.size()), allocatorStretches(t, allocator_syncs)};
  const ApiTable& a = t.api_calls;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string& name = t.text(a.name[i]);
    if (name.find("emcpy") != std::string::npos) w.copy_calls[a.session[i]].push_back({a.start_ns[i], a.end_ns[i]});
    // cudaFree and cuMemFree wait for the device inside the call, as an allocator's own synchronisation does.
    const bool frees_in_sync =
        freesDeviceMemory(name) && (name.starts_with("cudaFree") || name.starts_with("cuMemFree"));
    if (allocator_syncs[i] || frees_in_sync) w.allocator_sync_ends[a.session[i]].push_back(a.end_ns[i]);
  }
  for (size_t s = 0; s < t.sessions.size(); ++s) {
    w.compiles.push_back(annotatedCompiles(t, static_cast<int32_t>(s)));
    std::vector<Interval> stretches;
    for (const RuntimeCompile& c : runtimeCompiles(t, static_cast<int32_t>(s))) {
      if (c.compiled && !c.unloaded) stretches.push_back(c.stretch);
    }
    w.compiler_stretches.push_back(mergeIntervals(std::move(stretches)));
  }
  for (auto& ends : w.allocator_sync_ends) std::sort(ends.begin(), ends.end());
  for (auto& calls : w.copy_calls) calls = mergeIntervals(std::move(calls));
  return w;
}

bool anyIn(const std::vector<int64_t>& sorted, int64_t after, int64_t up_to) {
  auto it = std::upper_bound(sorted.begin(), sorted.end(), after);
  return it != sorted.end() && *it <= up_to;
}

// `for_result`: the host waited in this gap for a result to come back from the GPU (resultFetchedOnceDone).
void classifyGap(int64_t gap_start, const WorkItem& next, bool for_result, const HostWaits& waits, int32_t session,
                 int64_t recording_cost, IdleBreakdown& idle) {
  const std::vector<int64_t>& sync_ends = waits.sync_ends[session];
  const std::vector<Interval>& copy_calls = waits.copy_calls[session];
  const int64_t allocating = overlapLength(waits.alloc_calls[session], gap_start, next.start);
  const int64_t compiling = std::min(next.start - gap_start - allocating,
                                     overlapLength(waits.compiler_stretches[session], gap_start, next.start));
  idle.total_ns += next.start - gap_start;
  idle.allocating_ns += allocating;
  idle.compiling_ns += compiling;
  const int64_t length = next.start - gap_start - allocating - compiling;
  ++idle.gaps;
  if (next.launch != kNone && insideAny(waits.compiles[session], next.launch)) {
    idle.compiling_ns += length;
  } else if (next.pageable_copy) {
    idle.copy_wait_ns += length;
  } else if (next.launch == kNone || next.launch <= gap_start) {
    idle.queued_ns += length;
  } else if (for_result || anyIn(sync_ends, gap_start, next.launch)) {
    idle.after_sync_ns += length;
  } else if (anyIn(waits.allocator_sync_ends[session], gap_start, next.launch)) {
    idle.allocating_ns += length;  // the allocator emptied the queue: what the host does until it launches shows
  } else {
    // The host's copy calls in the gap are waits on a copy; the rest of it the host spent on other work or
    // launching (a short copy call in a long gap does not make the whole gap a copy's).
    const int64_t copying = std::min(length, overlapLength(copy_calls, gap_start, next.launch));
    idle.copy_wait_ns += copying;
    const int64_t rest = length - copying;
    if (rest >= kHostBusyGapNs) {
      idle.host_busy_ns += rest;
    } else {
      const int64_t recording = std::min(rest, recording_cost);
      idle.recording_ns += recording;
      idle.launch_bound_ns += rest - recording;
    }
  }
}

// Whether [start, end] lies inside one of the windows (sorted, disjoint); no windows: everything counts.
bool inWindows(const std::vector<Interval>& windows, int64_t start, int64_t end) {
  if (windows.empty()) return true;
  const Interval* w = lastStartingBy(windows, start);
  return w && w->end >= end;
}

// A copy to the host that another thread than the one that issued the work before it asked for only once the
// GPU had run dry: the runtime's transfer thread fetching a result the program's thread is blocked on. JAX's
// float(loss) waits on no CUDA call of its own thread: XLA's host callback sees the step's end, a thread of its
// own issues the copy, and the program's thread dispatches the next step once the value is there. The GPU idled
// 741 us of a 1.05 ms step around each such copy (bench/corpus/jax_loss_float_every_step, H200, 2026-11-29).
bool resultFetchedOnceDone(const WorkItem& copy, const WorkItem* before, int64_t gap_start) {
  return copy.read_back && copy.launch != kNone && copy.launch > gap_start && before && before->thread != kNone &&
         copy.thread != kNone && copy.thread != before->thread;
}

// Calls gap(i, next, for_result) for each gap before busy[i] (i >= 1) that some work ends, work[next] being that
// work; for_result: the host waited in it for a result fetched once the GPU was done, the gap before the fetch
// and the one after it where the fetch ran alone.
template <typename Gap>
void forEachGap(const std::vector<Interval>& busy, const std::vector<WorkItem>& work, Gap gap) {
  size_t next = 0;
  bool fetched = false;  // the work that ended the previous gap was such a fetch
  for (size_t i = 1; i < busy.size(); ++i) {
    const size_t first = next;  // the work of busy stretch i - 1 is [first, next) once next moves on
    while (next < work.size() && work[next].start < busy[i].start) ++next;  // the work that ends the gap
    if (next >= work.size()) break;
    const bool after_fetch = fetched && next - first == 1;
    fetched = resultFetchedOnceDone(work[next], next > 0 ? &work[next - 1] : nullptr, busy[i - 1].end);
    gap(i, next, fetched, fetched || after_fetch);
  }
}

IdleBreakdown idleBreakdown(const std::vector<Interval>& busy, const std::vector<WorkItem>& work,
                            const HostWaits& waits, int32_t session, int64_t recording_cost,
                            const std::vector<Interval>& windows) {
  IdleBreakdown idle;
  forEachGap(busy, work, [&](size_t i, size_t next, bool fetch, bool for_result) {
    if (fetch && inWindows(windows, work[next].start, work[next].start)) ++idle.results_fetched;
    if (inWindows(windows, busy[i - 1].end, busy[i].start)) {
      classifyGap(busy[i - 1].end, work[next], for_result, waits, session, recording_cost, idle);
    }
  });
  return idle;
}

// Launch latency, launch-call cost and short kernels of one device.
void measureLaunches(const TraceData& t, int32_t device, const std::vector<Interval>& busy,
                     const std::vector<Interval>& windows, DeviceTimeline& out) {
  std::vector<int64_t> all, on_idle, call_ns, durations;
  const KernelTable& k = t.kernels;
  for (size_t i = 0; i < k.size(); ++i) {
    if (k.device[i] != device || !inWindows(windows, k.start_ns[i], k.start_ns[i])) continue;
    durations.push_back(k.end_ns[i] - k.start_ns[i]);
    const int32_t call = k.launch_call[i];
    if (call == kNone) continue;
    const int64_t launch = t.api_calls.start_ns[call];
    call_ns.push_back(t.api_calls.end_ns[call] - launch);
    all.push_back(std::max<int64_t>(0, k.start_ns[i] - launch));
    // Launched onto an idle GPU: it opens a busy stretch, and was launched after the previous one ended.
    auto it = std::upper_bound(busy.begin(), busy.end(), k.start_ns[i],
                               [](int64_t s, const Interval& b) { return s < b.start; });
    if (it != busy.begin() && std::prev(it)->start == k.start_ns[i] &&
        (std::prev(it) == busy.begin() || launch >= std::prev(it, 2)->end)) {
      on_idle.push_back(all.back());
    }
  }
  out.kernels = static_cast<int64_t>(durations.size());
  out.launch_latency_all = summarize(all);
  out.launch_latency_on_idle_gpu = summarize(on_idle);
  out.launch_call_ns = summarize(call_ns).median;
  for (int64_t d : durations) {
    if (d < out.launch_call_ns) {
      ++out.short_kernels;
      out.short_kernel_ns += d;
    }
  }
}

}  // namespace

std::vector<DeviceTimeline> analyzeTimeline(const TraceData& trace) { return analyzeTimeline(trace, {}); }

std::vector<DeviceTimeline> analyzeTimeline(const TraceData& trace, const std::vector<Interval>& windows) {
  return analyzeTimeline(trace, windows, deviceActivity(trace));
}

std::vector<DeviceTimeline> analyzeTimeline(const TraceData& trace, const std::vector<Interval>& windows_in,
                                            const std::vector<DeviceActivity>& activity) {
  const std::vector<Interval> windows = mergeIntervals(windows_in);
  const std::vector<std::vector<WorkItem>> work = workByDevice(trace);
  const HostWaits waits = hostWaits(trace);
  std::vector<int32_t> session_of_device(trace.devices.size(), 0);
  for (size_t s = 0; s < trace.sessions.size(); ++s) {
    for (size_t d = 0; d < trace.devices.size(); ++d) {
      if (trace.devices[d].session_id == trace.sessions[s].id) session_of_device[d] = static_cast<int32_t>(s);
    }
  }
  std::vector<DeviceTimeline> out(trace.devices.size());
  for (size_t d = 0; d < out.size(); ++d) {
    DeviceTimeline& tl = out[d];
    const DeviceActivity& a = activity[d];
    tl.device = static_cast<int32_t>(d);
    if (!a.busy.empty()) {
      tl.window_start_ns =
          windows.empty() ? a.busy.front().start : std::max(a.busy.front().start, windows.front().start);
      tl.window_end_ns = windows.empty() ? a.busy.back().end : std::min(a.busy.back().end, windows.back().end);
      tl.window_end_ns = std::max(tl.window_end_ns, tl.window_start_ns);
    }
    tl.busy_ns = windows.empty() ? totalLength(a.busy) : overlapLength(a.busy, windows);
    tl.idle = idleBreakdown(a.busy, work[d], waits, session_of_device[d],
                            recordingCostPerLaunch(trace, session_of_device[d]), windows);
    measureLaunches(trace, tl.device, a.busy, windows, tl);
    tl.copy_ns = windows.empty() ? totalLength(a.copies) : overlapLength(a.copies, windows);
    const std::vector<Interval> copies_in = windows.empty() ? a.copies : intersect(a.copies, windows);
    tl.copy_overlap_ns = overlapLength(a.kernels, copies_in);
  }
  return out;
}

std::vector<Interval> resultFetchWaits(const TraceData& t, int32_t device, const std::vector<Interval>& busy) {
  if (device < 0 || static_cast<size_t>(device) >= t.devices.size()) return {};
  const std::vector<WorkItem> work = std::move(workByDevice(t)[static_cast<size_t>(device)]);
  std::vector<Interval> waits;
  forEachGap(busy, work, [&](size_t i, size_t, bool fetch, bool) {
    if (fetch) waits.push_back({busy[i - 1].end, busy[i].end});
  });
  return waits;
}

namespace {

bool loadsModule(std::string_view name) {
  return name.starts_with("cuModuleLoad") || name.starts_with("cuLibraryLoad") || name.starts_with("cudaLibraryLoad") ||
         name.starts_with("cuLinkComplete");
}

bool unloadsModule(std::string_view name) {
  return name.starts_with("cuModuleUnload") || name.starts_with("cuLibraryUnload") ||
         name.starts_with("cudaLibraryUnload");
}

// The kernels launched by the calls of process `session` from call `first` on (up to kNextKernels): of `thread`
// alone, within its next 64 calls, or of any thread where it is kNone; within the process's next 4096 calls (a
// bounded look: a trace of millions of calls may hold hundreds of loads).
std::vector<std::string> nextKernels(const TraceData& t, const std::vector<int32_t>& kernel_of_call, size_t first,
                                     int32_t session, int64_t thread) {
  const ApiTable& a = t.api_calls;
  std::vector<std::string> kernels;
  int seen = 0;
  for (size_t j = first; j < std::min(a.size(), first + 4095) && kernels.size() < kNextKernels; ++j) {
    if (a.session[j] != session || (thread != kNone && a.thread_id[j] != thread)) continue;
    if (thread != kNone && seen++ == 64) break;
    if (kernel_of_call[j] != kNone) kernels.emplace_back(t.kernelName(static_cast<size_t>(kernel_of_call[j])));
  }
  return kernels;
}

}  // namespace

std::vector<RuntimeCompile> runtimeCompiles(const TraceData& t, int32_t session) {
  const ApiTable& a = t.api_calls;
  std::vector<int32_t> kernel_of_call(a.size(), kNone);
  for (size_t k = 0; k < t.kernels.size(); ++k) {
    if (t.kernels.launch_call[k] != kNone)
      kernel_of_call[static_cast<size_t>(t.kernels.launch_call[k])] = static_cast<int32_t>(k);
  }
  // XLA's own compile ranges, whole (its autotuner's loads inside them are part of them).
  const std::vector<Interval> annotated = annotatedCompiles(t, session);
  std::vector<RuntimeCompile> compiles;
  size_t next = 0;
  for (const Interval& window : annotated) {
    while (next < a.size() && a.start_ns[next] < window.end) ++next;
    compiles.push_back({window, nextKernels(t, kernel_of_call, next, session, kNone)});
  }
  std::map<int64_t, int64_t> last_end;                      // thread -> the end of its latest call
  std::map<int64_t, int64_t> last_launch;                   // thread -> the end of its latest kernel launch
  std::map<int64_t, std::vector<std::string>> last_loaded;  // thread -> the kernels run after its latest load
  for (size_t i = 0; i < a.size(); ++i) {                   // in start order
    if (a.session[i] != session) continue;
    const int64_t thread = a.thread_id[i];
    const auto last = last_end.find(thread);
    const std::string_view name = t.text(a.name[i]);
    if ((loadsModule(name) || unloadsModule(name)) && !insideAny(annotated, a.start_ns[i])) {
      const bool unloaded = unloadsModule(name);
      const bool compiled = !unloaded && last != last_end.end() && a.start_ns[i] - last->second >= kCompileGapNs;
      // A load alone is the library's host work since the thread's last launch (a cuFFT plan: its loads, a
      // copy of its tables and the planning between them), at most kCompileGapNs before the load; an unload
      // likewise (the plan's destruction), named after the library whose kernels the thread loaded last.
      const auto launched = last_launch.find(thread);
      const int64_t since =
          std::max(launched == last_launch.end() ? a.start_ns[i] : launched->second, a.start_ns[i] - kCompileGapNs);
      if (!unloaded) last_loaded[thread] = nextKernels(t, kernel_of_call, i + 1, session, thread);
      compiles.push_back({{compiled ? last->second : std::min(since, a.start_ns[i]), a.end_ns[i]},
                          last_loaded[thread],
                          compiled,
                          unloaded});
    }
    if (kernel_of_call[i] != kNone) last_launch[thread] = a.end_ns[i];
    last_end[thread] = std::max(last == last_end.end() ? 0 : last->second, a.end_ns[i]);
  }
  std::sort(compiles.begin(), compiles.end(),
            [](const RuntimeCompile& x, const RuntimeCompile& y) { return x.stretch.start < y.stretch.start; });
  return compiles;
}

}  // namespace gpuscope::analysis
