#include "gui/timeline_lanes.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <future>
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
// stack by depth and overlapping work gets a lane of its own. The trace's tables come sorted by start, so
// the sort is mostly skipped; most tracks fill one lane, so the first lane is sized for everything.
std::vector<Lane> pack(std::vector<Item> items) {
  const auto by_start = [](const Item& a, const Item& b) { return a.start < b.start; };
  if (!std::is_sorted(items.begin(), items.end(), by_start)) std::stable_sort(items.begin(), items.end(), by_start);
  std::vector<Lane> lanes;
  for (const Item& it : items) {
    auto lane = std::find_if(lanes.begin(), lanes.end(), [&](const Lane& l) { return l.end.back() <= it.start; });
    if (lane == lanes.end()) {
      lane = lanes.insert(lanes.end(), Lane{});
      if (lanes.size() == 1) lane->reserve(items.size());
    }
    lane->start.push_back(it.start);
    lane->end.push_back(std::max(it.end, it.start));
    lane->label.push_back(it.label);
    lane->item.push_back(it.row);
    lane->kind.push_back(it.kind);
  }
  return lanes;
}

// Items grouped by a key (a thread, a stream), the group of the previous item tried first: a trace's rows
// come in runs of one thread or stream, and a map lookup per row is most of the cost of grouping.
template <typename Key>
class Groups {
 public:
  std::vector<Item>& of(const Key& key) {
    if (!last_ || last_key_ != key) last_ = &groups_[key], last_key_ = key;
    return *last_;
  }
  std::map<Key, std::vector<Item>>& all() { return groups_; }

 private:
  std::map<Key, std::vector<Item>> groups_;
  std::vector<Item>* last_ = nullptr;
  Key last_key_{};
};

// Adds a table of GPU work (sorted by start) to each stream's items, merged with what is there already,
// so the items stay in start order and packing them needs no sort.
void addGpuWork(const analysis::GpuWorkColumns& w, ItemKind kind, Groups<int32_t>& by_stream,
                const std::vector<int32_t>& labels) {
  std::map<int32_t, size_t> before;
  for (const auto& [stream, items] : by_stream.all()) before[stream] = items.size();
  for (size_t i = 0; i < w.size(); ++i) {
    if (w.stream[i] == analysis::kNone) continue;
    by_stream.of(w.stream[i])
        .push_back({w.start_ns[i], w.end_ns[i], labels.empty() ? 0 : labels[i], static_cast<uint32_t>(i), kind});
  }
  for (auto& [stream, items] : by_stream.all()) {
    const auto mid = items.begin() + static_cast<std::ptrdiff_t>(before[stream]);
    std::inplace_merge(items.begin(), mid, items.end(), [](const Item& a, const Item& b) { return a.start < b.start; });
  }
}

// One track per CPU thread: its API calls, then its NVTX ranges by depth.
std::vector<Track> threadTracks(const analysis::TraceData& t) {
  using Thread = std::pair<int32_t, int64_t>;  // (session, thread)
  Groups<Thread> calls, ranges;
  for (size_t i = 0; i < t.api_calls.size(); ++i) {
    calls.of({t.api_calls.session[i], t.api_calls.thread_id[i]})
        .push_back({t.api_calls.start_ns[i], t.api_calls.end_ns[i], t.api_calls.name[i], static_cast<uint32_t>(i),
                    ItemKind::kApiCall});
  }
  for (size_t i = 0; i < t.nvtx.size(); ++i) {
    if (t.nvtx.kind[i] != schema::NvtxKind::kRange) continue;
    ranges.of({t.nvtx.session[i], t.nvtx.thread_id[i]})
        .push_back({t.nvtx.start_ns[i], t.nvtx.end_ns[i], t.nvtx.name[i], static_cast<uint32_t>(i), ItemKind::kNvtx});
  }
  std::vector<Track> tracks;
  std::map<Thread, bool> threads;
  for (const auto& [key, v] : calls.all()) threads[key] = true;
  for (const auto& [key, v] : ranges.all()) threads[key] = true;
  for (const auto& [key, unused] : threads) {
    const schema::SessionRow& process = t.sessions[static_cast<size_t>(key.first)];
    const QString rank = process.rank ? QString("rank %1 · ").arg(*process.rank) : QString();
    Track track{rank + QString("pid %1 · thread %2").arg(process.pid).arg(key.second), false, {}};
    for (auto* source : {&calls.all(), &ranges.all()}) {
      auto it = source->find(key);
      if (it == source->end()) continue;
      for (Lane& lane : pack(std::move(it->second))) track.lanes.push_back(std::move(lane));
    }
    tracks.push_back(std::move(track));
  }
  return tracks;
}

// One track per GPU stream: its kernels, copies and memsets.
std::vector<Track> streamTracks(const analysis::TraceData& t) {
  std::vector<int32_t> kernel_labels(t.kernels.size());
  for (size_t i = 0; i < t.kernels.size(); ++i) kernel_labels[i] = t.configs[t.kernels.config[i]].name.id;
  Groups<int32_t> work;
  addGpuWork(t.kernels, ItemKind::kKernel, work, kernel_labels);
  addGpuWork(t.copies, ItemKind::kCopy, work, {});
  addGpuWork(t.memsets, ItemKind::kMemset, work, {});
  std::vector<Track> tracks;
  for (auto& [stream, items] : work.all()) {
    const analysis::Stream& s = t.streams[static_cast<size_t>(stream)];
    tracks.push_back({QString("stream %1 · ").arg(s.stream_id) + QString::fromStdString(t.deviceLabel(s.device)), true,
                      pack(std::move(items))});
  }
  return tracks;
}

}  // namespace

// The CPU and the GPU tracks are built on two threads: on a large trace this is most of the time to the
// first frame after loading.
std::vector<Track> buildTracks(const analysis::TraceData& t) {
  std::future<std::vector<Track>> threads = std::async(std::launch::async, threadTracks, std::cref(t));
  std::vector<Track> streams = streamTracks(t);
  std::vector<Track> tracks = threads.get();
  for (Track& track : streams) tracks.push_back(std::move(track));
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
