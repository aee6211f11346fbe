#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace gpuscope::collector {

// When recording is on, for `gpuscope record --capture-range NAME` (NVTX ranges of that name, pushed and popped
// or started and ended, on any thread), `--capture-range cudaProfilerApi` (between cudaProfilerStart and
// cudaProfilerStop) and `--delay`/`--duration` (a window of the run's time). Outside, the collector switches
// CUPTI's costly record kinds off, so the program runs there at its own speed, as under Nsight Systems'
// capture ranges. Pure bookkeeping, no CUPTI: the collector feeds it CUPTI's NVTX and API callbacks and
// switches the record kinds when a call says the gate changed. The program may pause recording on its own too
// (mark()): the PyTorch bridge does for a few steps, to time them unrecorded.
class CaptureGate {
 public:
  static constexpr std::string_view kProfilerApi = "cudaProfilerApi";  // as Nsight Systems names it

  // range: an NVTX range's name, kProfilerApi, or empty (no range: the window alone decides).
  // window_start_ns/window_end_ns: the run's time (any clock the caller keeps) recording may be on in;
  // window_end_ns 0 means no end.
  CaptureGate(std::string range, int64_t window_start_ns, int64_t window_end_ns);

  bool configured() const { return !range_.empty() || window_start_ns_ > 0 || window_end_ns_ > 0; }
  bool watchesNvtx() const { return !range_.empty() && range_ != kProfilerApi; }
  bool watchesProfilerApi() const { return range_ == kProfilerApi; }
  bool open() const;  // whether recording should be on now
  int64_t timesOpened() const;
  const std::string& range() const { return range_; }

  // Each returns whether the gate changed (opened or closed) with this call.
  bool push(int64_t stack, std::string_view name);  // stack: a thread (and NVTX domain) of its own
  bool pop(int64_t stack);
  bool start(uint64_t range_id, std::string_view name);
  bool end(uint64_t range_id);
  bool profilerStart();
  bool profilerStop();
  bool tick(int64_t now_ns);  // the window's edges
  // An NVTX mark's message: the program's own pause and resume (marks::kRecordingPaused, kRecordingResumed), which
  // hold recording off inside the gate's ranges too. Returns whether paused() changed.
  bool mark(std::string_view message);
  bool paused() const;
  int64_t timesPaused() const;

 private:
  bool changed(bool was_open);
  bool setProfiler(bool on);
  bool openLocked() const;

  const std::string range_;
  const int64_t window_start_ns_, window_end_ns_;
  mutable std::mutex mutex_;
  std::unordered_map<int64_t, std::vector<bool>> stacks_;  // per stack: which pushes are the capture range
  std::unordered_set<uint64_t> started_;                   // start/end ranges of that name still open
  int64_t inside_ = 0;                                     // capture ranges open now, on all threads
  bool profiler_on_ = false;
  bool in_window_ = false;
  bool paused_ = false;
  int64_t times_opened_ = 0, times_paused_ = 0;
};

}  // namespace gpuscope::collector
