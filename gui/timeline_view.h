// The Timeline view: tracks per CPU thread and GPU stream, stacked lanes of boxes, a time ruler. Zoom with
// the wheel (at the mouse) or W/S, pan by dragging or A/D, as in Perfetto and Tracy; a click selects the item
// under the mouse and says what it is. Painting asks each lane only for its visible boxes.
#pragma once

#include <QAbstractScrollArea>
#include <memory>
#include <optional>

#include "analyzer/kernel_classifier.h"
#include "gui/timeline_lanes.h"
#include "gui/trace_snapshot.h"

namespace gpuscope::gui {

class TimelineView : public QAbstractScrollArea {
  Q_OBJECT

 public:
  static constexpr int kTitleWidth = 260, kLaneHeight = 16, kRulerHeight = 22, kTrackGap = 6;

  explicit TimelineView(QWidget* parent = nullptr);
  void setSnapshot(std::shared_ptr<const TraceSnapshot> snapshot);
  TimeAxis& axis() { return axis_; }
  const std::vector<Track>& tracks() const { return tracks_; }
  // The item at a point of the viewport, as (track, lane, index in lane).
  struct Hit {
    size_t track = 0, lane = 0, index = 0;
  };
  std::optional<Hit> itemAt(QPoint viewport_point) const;
  QString describe(const Hit& hit) const;  // name, kind, start and duration with units

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
  void paintTrack(QPainter& p, const Track& t, int top) const;
  QColor colourOf(const Lane& lane, size_t index) const;

  std::shared_ptr<const TraceSnapshot> snapshot_;
  std::vector<Track> tracks_;
  std::vector<analysis::KernelKind> kinds_;  // per kernel configuration, for the boxes' colours
  TimeAxis axis_;
  QPoint drag_from_;
  bool dragging_ = false;
  std::optional<Hit> selection_;
};

}  // namespace gpuscope::gui
