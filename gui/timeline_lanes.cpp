#include "gui/timeline_lanes.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace gpuscope::gui {

namespace {

struct Item {
  int64_t start, end;
  int32_t label;
  uint32_t row;
  ItemKind kind;
};

// Packs items (any order) into lanes: each goes into the first lane free at its start, so nested NVTX ranges
// stack by depth and overlapping work gets a lane of its own.
std::vector<Lane> pack(std::vector<Item> items) {
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.start < b.start; });
  std::vector<Lane> lanes;
  for (const Item& it : items) {
    auto lane = std::find_if(lanes.begin(), lanes.end(), [&](const Lane& l) { return l.end.back() <= it.start; });
    if (lane == lanes.end()) lane = lanes.insert(lanes.end(), Lane{});
    lane->start.push_back(it.start);
    lane->end.push_back(std::max(it.end, it.start));
    lane->label.push_back(it.label);
    lane->item.push_back(it.row);
    lane->kind.push_back(it.kind);
  }
  return lanes;
}

void addGpuWork(const analysis::GpuWorkColumns& w, ItemKind kind, std::map<int32_t, std::vector<Item>>& by_stream,
                const std::vector<int32_t>& labels) {
  for (size_t i = 0; i < w.size(); ++i) {
    if (w.stream[i] == analysis::kNone) continue;
    by_stream[w.stream[i]].push_back(
        {w.start_ns[i], w.end_ns[i], labels.empty() ? 0 : labels[i], static_cast<uint32_t>(i), kind});
  }
}

}  // namespace

std::vector<Track> buildTracks(const analysis::TraceData& t) {
  std::map<std::pair<int32_t, int64_t>, std::vector<Item>> calls, ranges;  // per (session, thread)
  for (size_t i = 0; i < t.api_calls.size(); ++i) {
    calls[{t.api_calls.session[i], t.api_calls.thread_id[i]}].push_back({t.api_calls.start_ns[i], t.api_calls.end_ns[i],
                                                                         t.api_calls.name[i], static_cast<uint32_t>(i),
                                                                         ItemKind::kApiCall});
  }
  for (size_t i = 0; i < t.nvtx.size(); ++i) {
    if (t.nvtx.kind[i] != schema::NvtxKind::kRange) continue;
    ranges[{t.nvtx.session[i], t.nvtx.thread_id[i]}].push_back(
        {t.nvtx.start_ns[i], t.nvtx.end_ns[i], t.nvtx.name[i], static_cast<uint32_t>(i), ItemKind::kNvtx});
  }
  std::vector<Track> tracks;
  std::map<std::pair<int32_t, int64_t>, bool> threads;
  for (const auto& [key, v] : calls) threads[key] = true;
  for (const auto& [key, v] : ranges) threads[key] = true;
  for (const auto& [key, unused] : threads) {
    Track track{
        QString("pid %1 · thread %2").arg(t.sessions[static_cast<size_t>(key.first)].pid).arg(key.second), false, {}};
    for (auto* source : {&calls, &ranges}) {
      auto it = source->find(key);
      if (it == source->end()) continue;
      for (Lane& lane : pack(std::move(it->second))) track.lanes.push_back(std::move(lane));
    }
    tracks.push_back(std::move(track));
  }
  std::vector<int32_t> kernel_labels(t.kernels.size());
  for (size_t i = 0; i < t.kernels.size(); ++i) kernel_labels[i] = t.configs[t.kernels.config[i]].name.id;
  std::map<int32_t, std::vector<Item>> work;
  addGpuWork(t.kernels, ItemKind::kKernel, work, kernel_labels);
  addGpuWork(t.copies, ItemKind::kCopy, work, {});
  addGpuWork(t.memsets, ItemKind::kMemset, work, {});
  for (auto& [stream, items] : work) {
    const analysis::Stream& s = t.streams[static_cast<size_t>(stream)];
    tracks.push_back({QString("stream %1 · ").arg(s.stream_id) + QString::fromStdString(t.deviceLabel(s.device)), true,
                      pack(std::move(items))});
  }
  return tracks;
}

std::vector<LaneBox> visibleBoxes(const Lane& lane, const TimeAxis& axis) {
  std::vector<LaneBox> boxes;
  const int64_t view_end = axis.viewEnd();
  // Ends are in order: the first item still running at the window's start.
  size_t i =
      static_cast<size_t>(std::upper_bound(lane.end.begin(), lane.end.end(), axis.viewStart()) - lane.end.begin());
  while (i < lane.size() && lane.start[i] < view_end) {
    const double x0 = axis.xOf(lane.start[i]), x1 = axis.xOf(lane.end[i]);
    if (x1 - x0 >= 1.0) {
      boxes.push_back({x0, x1, i, 1});
      ++i;
      continue;
    }
    // Narrower than a pixel: everything starting before the next pixel column folds into this box.
    const int64_t next_column = axis.timeAt(std::floor(x0) + 1.0);
    size_t j = static_cast<size_t>(
        std::lower_bound(lane.start.begin() + static_cast<std::ptrdiff_t>(i) + 1, lane.start.end(), next_column) -
        lane.start.begin());
    boxes.push_back({x0, std::max(axis.xOf(lane.end[j - 1]), x0 + 1.0), i, j - i});
    i = j;
  }
  return boxes;
}

Counter buildCounter(QString title, const std::vector<analysis::MemoryPoint>& points) {
  Counter c;
  c.title = std::move(title);
  for (const analysis::MemoryPoint& p : points) {
    if (!c.time.empty() && p.time_ns < c.time.back()) continue;  // out of order: keep the counter monotonic
    c.time.push_back(p.time_ns);
    c.value.push_back(p.live_bytes);
    if (c.value.size() % Counter::kCounterBlock == 1) c.block_max.push_back(p.live_bytes);
    c.block_max.back() = std::max(c.block_max.back(), p.live_bytes);
    c.peak = std::max(c.peak, p.live_bytes);
  }
  return c;
}

int64_t maxIn(const Counter& c, int64_t t0, int64_t t1) {
  const auto first = static_cast<size_t>(std::upper_bound(c.time.begin(), c.time.end(), t0) - c.time.begin());
  const auto last = static_cast<size_t>(std::lower_bound(c.time.begin(), c.time.end(), t1) - c.time.begin());
  int64_t best = first > 0 ? c.value[first - 1] : 0;  // in effect at t0
  size_t i = first;
  while (i < last) {
    const size_t block = i / Counter::kCounterBlock;
    if (i % Counter::kCounterBlock == 0 && i + Counter::kCounterBlock <= last) {  // a whole block inside
      best = std::max(best, c.block_max[block]);
      i += Counter::kCounterBlock;
    } else {
      best = std::max(best, c.value[i++]);
    }
  }
  return best;
}

}  // namespace gpuscope::gui
