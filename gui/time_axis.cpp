#include "gui/time_axis.h"

#include <algorithm>
#include <cmath>

namespace gpuscope::gui {

void TimeAxis::setTrace(int64_t start_ns, int64_t end_ns) {
  trace_start_ = start_ns;
  trace_end_ = std::max(end_ns, start_ns + 1);
  showAll();
}

void TimeAxis::setWidth(int pixels) {
  const int64_t end = viewEnd();
  width_ = std::max(pixels, 1);
  show(start_, end);
}

void TimeAxis::showAll() { show(trace_start_, trace_end_); }

void TimeAxis::show(int64_t start_ns, int64_t end_ns) {
  start_ = start_ns;
  ns_per_px_ = static_cast<double>(std::max<int64_t>(end_ns - start_ns, 1)) / width_;
  clamp();
}

int64_t TimeAxis::timeAt(double x) const { return start_ + std::llround(x * ns_per_px_); }

int64_t TimeAxis::viewEnd() const { return start_ + std::llround(width_ * ns_per_px_); }

void TimeAxis::zoom(double factor, double anchor_x) {
  if (!(factor > 0) || !std::isfinite(factor)) return;
  const int64_t anchor = timeAt(anchor_x);
  ns_per_px_ = std::clamp(ns_per_px_ / factor, kMinNsPerPixel, maxNsPerPixel());
  start_ = anchor - std::llround(anchor_x * ns_per_px_);
  clamp();
}

void TimeAxis::pan(double dx) {
  if (!std::isfinite(dx)) return;
  start_ += std::llround(dx * ns_per_px_);
  clamp();
}

double TimeAxis::maxNsPerPixel() const { return static_cast<double>(trace_end_ - trace_start_) / width_; }

void TimeAxis::clamp() {
  ns_per_px_ = std::clamp(ns_per_px_, kMinNsPerPixel, std::max(kMinNsPerPixel, maxNsPerPixel()));
  const int64_t span = std::llround(width_ * ns_per_px_);
  start_ = std::clamp(start_, trace_start_, std::max(trace_start_, trace_end_ - span));
}

}  // namespace gpuscope::gui
