// The timeline's time↔pixel mapping: the visible window of a trace, as its start and nanoseconds per pixel.
// Zooming keeps the time under the anchor (the mouse) where it is; panning and zooming stay inside the trace,
// between a whole-trace view and kMinNsPerPixel.
#pragma once

#include <cstdint>

namespace gpuscope::gui {

class TimeAxis {
 public:
  static constexpr double kMinNsPerPixel = 0.01;  // 100 pixels per nanosecond: closer is no use

  void setTrace(int64_t start_ns, int64_t end_ns);  // the whole trace; shows all of it
  void setWidth(int pixels);                        // keeps the visible window, rescaled
  void showAll();
  void show(int64_t start_ns, int64_t end_ns);  // a window (clamped to the trace)

  double xOf(int64_t t) const { return (static_cast<double>(t - start_)) / ns_per_px_; }
  int64_t timeAt(double x) const;
  void zoom(double factor, double anchor_x);  // factor > 1 zooms in
  void pan(double dx);                        // positive: later times come into view

  int64_t viewStart() const { return start_; }
  int64_t viewEnd() const;
  double nsPerPixel() const { return ns_per_px_; }
  int width() const { return width_; }

 private:
  void clamp();
  double maxNsPerPixel() const;

  int64_t trace_start_ = 0, trace_end_ = 1;
  int width_ = 1;
  int64_t start_ = 0;
  double ns_per_px_ = 1;
};

}  // namespace gpuscope::gui
