// The Timeline view: tracks per CPU thread and GPU stream, stacked lanes of boxes, a time ruler. Zoom with
// the wheel (at the mouse) or W/S, pan by dragging or A/D, as in Perfetto and Tracy; a click selects the item
// under the mouse, says what it is and draws an arrow from the call that launched it; shift-drag measures a
// range; findNext searches by name. Iterations are marked, and each device's live memory is a counter
// track. Painting asks each lane only for its visible boxes, and each counter for one value per pixel.
#pragma once

#include <QAbstractScrollArea>
#include <QColor>
#include <memory>
#include <optional>

#include "analyzer/kernel_classifier.h"
#include "gui/timeline_lanes.h"
#include "gui/trace_snapshot.h"

namespace gpuscope::gui {

class TimelineView : public QAbstractScrollArea {
  Q_OBJECT

 public:
  static constexpr int kTitleWidth = 260, kLaneHeight = 16, kRulerHeight = 36, kTrackGap = 6, kCounterHeight = 40;
  // Where the PyTorch bridge paused the recording. Opaque: blending a translucent colour is the slow path.
  static inline const QColor kPausedShade{0xe8, 0xe4, 0xf4};

  explicit TimelineView(QWidget* parent = nullptr);
  void setSnapshot(std::shared_ptr<const TraceSnapshot> snapshot);
  TimeAxis& axis() { return axis_; }
  // Zooms to a time range (with a margin each side) and marks it, for a finding's evidence or a kernel.
  void showRange(int64_t start_ns, int64_t end_ns);
  std::optional<std::pair<int64_t, int64_t>> highlight() const { return highlight_; }
  const std::vector<Track>& tracks() const { return *tracks_; }
  const std::vector<Counter>& counters() const { return counters_; }
  // The item at a point of the viewport, as (track, lane, index in lane).
  struct Hit {
    size_t track = 0, lane = 0, index = 0;
  };
  std::optional<Hit> itemAt(QPoint viewport_point) const;
  QString describe(const Hit& hit) const;  // every recorded field, with units
  void select(const Hit& hit);             // marks it (with a flow arrow from its launch) and says what it is
  std::optional<Hit> selection() const { return selection_; }
  std::optional<Hit> launchOf(const Hit& hit) const;  // the CUDA call that launched GPU work, where it is drawn
  // The next item after the selection (or the window's start) whose name holds `text`, any case; selected
  // and shown. False when there is none.
  bool findNext(const QString& text);
  std::optional<std::pair<int64_t, int64_t>> measured() const { return measured_; }

 signals:
  void selected(const QString& description);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;

 private:
  int trackHeight(const Track& t) const;
  int contentHeight() const;
  void paintRuler(QPainter& p) const;
  void paintIterations(QPainter& p) const;
  void paintPaused(QPainter& p) const;
  void paintIterationLabels(QPainter& p) const;
  void paintCounter(QPainter& p, const Counter& c, int top) const;
  int tracksTop() const;  // where the first track starts, scrolled
  int laneTop(const Hit& hit) const;
  void paintFlow(QPainter& p) const;
  void paintMeasure(QPainter& p) const;
  void paintTrack(QPainter& p, const Track& t, int top) const;
  QColor colourOf(const Lane& lane, size_t index) const;

  std::shared_ptr<const TraceSnapshot> snapshot_;
  std::shared_ptr<const std::vector<Track>> tracks_ = std::make_shared<const std::vector<Track>>();
  std::vector<analysis::KernelKind> kinds_;  // per kernel configuration, for the boxes' colours
  TimeAxis axis_;
  QPoint drag_from_;
  bool dragging_ = false;
  std::optional<Hit> selection_;
  std::optional<std::pair<int64_t, int64_t>> highlight_;
  std::optional<std::pair<int64_t, int64_t>> measured_;  // shift-drag: a time range and its length
  bool measuring_ = false;
  std::vector<Counter> counters_;  // one per device with memory events
};

}  // namespace gpuscope::gui
