// The timeline's data: one track per CPU thread (its CUDA API calls, then its NVTX ranges by depth) and per
// GPU stream (its kernels, copies and memsets), each a stack of lanes of intervals that do not overlap. The
// draw list of a lane for the visible window is found by binary search and folds everything narrower than a
// pixel into one box per pixel, so a frame costs O(pixels · log n) however many events the trace holds.
#pragma once

#include <QString>
#include <cstdint>
#include <vector>

#include "analyzer/memory_timeline.h"
#include "analyzer/trace_data.h"
#include "gui/time_axis.h"

namespace gpuscope::gui {

enum class ItemKind : uint8_t { kApiCall, kNvtx, kKernel, kCopy, kMemset };

// Intervals that do not overlap, in start order (so their ends are in order too).
struct Lane {
  std::vector<int64_t> start, end;
  std::vector<int32_t> label;  // string id: kernel, call or range name
  std::vector<uint32_t> item;  // row of the item's table in TraceData
  std::vector<ItemKind> kind;
  size_t size() const { return start.size(); }
  void reserve(size_t n) { start.reserve(n), end.reserve(n), label.reserve(n), item.reserve(n), kind.reserve(n); }
};

struct Track {
  // "pid 4242 · thread 4243" ("rank 1 · pid …" in a job), "stream 7 · GPU 0 (NVIDIA H100 80GB HBM3)"
  QString title;
  bool gpu = false;
  std::vector<Lane> lanes;
};

std::vector<Track> buildTracks(const analysis::TraceData& trace);

struct LaneBox {
  double x0 = 0, x1 = 0;  // pixels from the window's left edge
  size_t first = 0;       // index into the lane of its first item
  size_t count = 1;       // > 1: items narrower than a pixel, folded together
};

// The boxes of a lane inside the axis's window, left to right, at most about one per pixel column.
std::vector<LaneBox> visibleBoxes(const Lane& lane, const TimeAxis& axis);

// A counter track (a device's live memory): its value after each change, and the largest value of each
// block of kCounterBlock changes, so the largest value in a pixel column is found without a pass over
// every change in it.
struct Counter {
  static constexpr size_t kCounterBlock = 256;
  QString title;
  std::vector<int64_t> time, value;
  std::vector<int64_t> block_max;
  int64_t peak = 0;
};
Counter buildCounter(QString title, const std::vector<analysis::MemoryPoint>& points);
// The largest value in effect at some moment of [t0, t1): the one in effect at t0 and every later change
// before t1 (0 before the first change).
int64_t maxIn(const Counter& counter, int64_t t0, int64_t t1);

}  // namespace gpuscope::gui
