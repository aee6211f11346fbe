#include "collector/capture_gate.h"

#include <utility>

#include "formats/bridge_marks.h"

namespace gpuscope::collector {

CaptureGate::CaptureGate(std::string range, int64_t window_start_ns, int64_t window_end_ns)
    : range_(std::move(range)), window_start_ns_(window_start_ns), window_end_ns_(window_end_ns) {
  in_window_ = window_start_ns_ <= 0;  // a window with no delay is open from the start, until its end
}

bool CaptureGate::open() const {
  std::lock_guard lock(mutex_);
  return openLocked();
}

int64_t CaptureGate::timesOpened() const {
  std::lock_guard lock(mutex_);
  return times_opened_;
}

bool CaptureGate::openLocked() const {
  if (!in_window_) return false;
  if (range_.empty()) return true;
  return watchesProfilerApi() ? profiler_on_ : inside_ > 0;
}

bool CaptureGate::changed(bool was_open) {
  const bool now_open = openLocked();
  if (now_open && !was_open) ++times_opened_;
  return now_open != was_open;
}

bool CaptureGate::push(int64_t stack, std::string_view name) {
  if (!watchesNvtx()) return false;
  std::lock_guard lock(mutex_);
  const bool was_open = openLocked();
  const bool ours = name == range_;
  stacks_[stack].push_back(ours);
  inside_ += ours;
  return changed(was_open);
}

bool CaptureGate::pop(int64_t stack) {
  if (!watchesNvtx()) return false;
  std::lock_guard lock(mutex_);
  auto it = stacks_.find(stack);
  if (it == stacks_.end() || it->second.empty()) return false;  // a pop of a push made before we watched
  const bool was_open = openLocked();
  inside_ -= it->second.back();
  it->second.pop_back();
  return changed(was_open);
}

bool CaptureGate::start(uint64_t range_id, std::string_view name) {
  if (!watchesNvtx() || name != range_) return false;
  std::lock_guard lock(mutex_);
  const bool was_open = openLocked();
  if (started_.insert(range_id).second) ++inside_;
  return changed(was_open);
}

bool CaptureGate::end(uint64_t range_id) {
  if (!watchesNvtx()) return false;
  std::lock_guard lock(mutex_);
  if (started_.erase(range_id) == 0) return false;
  const bool was_open = openLocked();
  --inside_;
  return changed(was_open);
}

bool CaptureGate::profilerStart() { return setProfiler(true); }
bool CaptureGate::profilerStop() { return setProfiler(false); }

bool CaptureGate::setProfiler(bool on) {
  if (!watchesProfilerApi()) return false;
  std::lock_guard lock(mutex_);
  const bool was_open = openLocked();
  profiler_on_ = on;
  return changed(was_open);
}

bool CaptureGate::tick(int64_t now_ns) {
  std::lock_guard lock(mutex_);
  const bool was_open = openLocked();
  in_window_ = now_ns >= window_start_ns_ && (window_end_ns_ <= 0 || now_ns < window_end_ns_);
  return changed(was_open);
}

bool CaptureGate::mark(std::string_view message) {
  const bool pause = message == marks::kRecordingPaused;
  if (!pause && message != marks::kRecordingResumed) return false;
  std::lock_guard lock(mutex_);
  if (paused_ == pause) return false;
  paused_ = pause;
  times_paused_ += pause;
  return true;
}

bool CaptureGate::paused() const {
  std::lock_guard lock(mutex_);
  return paused_;
}

int64_t CaptureGate::timesPaused() const {
  std::lock_guard lock(mutex_);
  return times_paused_;
}

}  // namespace gpuscope::collector
