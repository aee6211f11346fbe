// gpuscope-gui on a large trace, off-screen: the time from opening to the first frame of the timeline (the
// trace loaded and its lanes built, as gpuscope-gui does before any analysis, one frame painted), the time the
// analyses then take (the other views wait for them; the timeline stays live), then the time of one
// timeline frame at zoom levels from the whole trace down to a microsecond, each the median of 15 frames
// panned a little. Run: QT_QPA_PLATFORM=offscreen build/bin/gui_bench TRACE (e.g. one
// `analyzer_bench N --keep DIR` made); results go to docs/benchmarks.md.
#include <QApplication>
#include <QPixmap>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "gui/timeline_view.h"
#include "gui/trace_snapshot.h"

namespace {

using Clock = std::chrono::steady_clock;
double ms(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: gui_bench TRACE\n");
    return 2;
  }
  const auto t0 = Clock::now();
  auto loaded = gpuscope::gui::loadSnapshot(argv[1]);
  if (!loaded) {
    std::fprintf(stderr, "gui_bench: %s\n", loaded.status().message().c_str());
    return 1;
  }
  const double load = ms(t0);
  gpuscope::gui::TimelineView view;
  view.resize(1600, 1000);
  view.setSnapshot(*loaded);
  (void)view.grab();
  const double first = ms(t0);
  const auto a0 = Clock::now();
  auto snapshot = gpuscope::gui::analyseSnapshot(**loaded);
  view.setSnapshot(snapshot);  // the counters and iteration markers join the timeline
  const double analysed = ms(a0);
  size_t items = 0;
  for (const auto& t : view.tracks()) {
    for (const auto& l : t.lanes) items += l.size();
  }
  std::printf(
      "%s: %zu timeline items in %zu tracks; loaded with its lanes in %.0f ms, first timeline frame at %.0f ms; "
      "then analysed in %.0f ms\n",
      argv[1], items, view.tracks().size(), load, first, analysed);
  const int64_t start = snapshot->trace().startNs(), span = snapshot->trace().durationNs();
  for (double share = 1.0; share * static_cast<double>(span) >= 1000; share /= 10) {
    const auto window = static_cast<int64_t>(share * static_cast<double>(span));
    std::vector<double> frames;
    for (int i = 0; i < 15; ++i) {
      const int64_t from = start + (span - window) / 2 + i * window / 50;  // a little pan each frame
      view.axis().show(from, from + window);
      const auto f0 = Clock::now();
      (void)view.grab();
      frames.push_back(ms(f0));
    }
    // The draw lists alone: every lane's visible boxes and every counter's column maxima.
    const auto d0 = Clock::now();
    size_t boxes = 0;
    for (const auto& t : view.tracks()) {
      for (const auto& l : t.lanes) boxes += gpuscope::gui::visibleBoxes(l, view.axis()).size();
    }
    const double lists = ms(d0);
    const auto c0 = Clock::now();
    for (const auto& c : view.counters()) {
      for (int x = 0; x < view.axis().width(); ++x)
        (void)gpuscope::gui::maxIn(c, view.axis().timeAt(x), view.axis().timeAt(x + 1));
    }
    const double counters = ms(c0);
    std::printf("    (%zu boxes: %.2f ms; counters %.2f ms)\n", boxes, lists, counters);
    std::sort(frames.begin(), frames.end());
    std::printf("  window %12lld ns (%.0e of the trace): frame %.2f ms median, %.2f ms max\n",
                static_cast<long long>(window), share, frames[frames.size() / 2], frames.back());
  }
  return 0;
}
