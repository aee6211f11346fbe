#include "gui/timeline_view.h"
#include "gui/text.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

#include "analyzer/kernel_classifier.h"
#include "analyzer/units.h"
#include "gui/timeline_details.h"

namespace gpuscope::gui {

namespace {

constexpr double kZoomStep = 1.25;   // one wheel notch or one W/S press
constexpr double kPanStep = 0.1;     // of the window's width, one A/D press
constexpr double kMinMarkerGap = 4;  // pixels between two iteration lines drawn

QColor classColour(analysis::KernelClass cls) {
  switch (cls) {
    case analysis::KernelClass::kGemm: return QColor(0x3b, 0x6e, 0xc5);
    case analysis::KernelClass::kConvolution: return QColor(0x2d, 0x8f, 0xa6);
    case analysis::KernelClass::kAttention: return QColor(0x7b, 0x4f, 0xc9);
    case analysis::KernelClass::kElementwise: return QColor(0xe0, 0x8e, 0x2b);
    case analysis::KernelClass::kReduction:
    case analysis::KernelClass::kNormalization: return QColor(0xd0, 0x6b, 0x3a);
    case analysis::KernelClass::kOptimizer: return QColor(0x4c, 0xa0, 0x5a);
    case analysis::KernelClass::kCommunication: return QColor(0xc2, 0x3b, 0x5b);
    case analysis::KernelClass::kCopy: return QColor(0x9a, 0x8a, 0x4a);
    default: return QColor(0x80, 0x80, 0x90);
  }
}

// The first iteration starting inside the window.
std::vector<analysis::Iteration>::const_iterator firstVisible(const std::vector<analysis::Iteration>& list,
                                                              const TimeAxis& axis) {
  return std::lower_bound(list.begin(), list.end(), axis.viewStart(),
                          [](const analysis::Iteration& i, int64_t t) { return i.start_ns < t; });
}

}  // namespace

TimelineView::TimelineView(QWidget* parent) : QAbstractScrollArea(parent) {
  setFocusPolicy(Qt::StrongFocus);
  viewport()->setMouseTracking(false);
}

void TimelineView::setSnapshot(std::shared_ptr<const TraceSnapshot> snapshot) {
  // The analysed snapshot of the trace already shown adds its memory counters and iteration markers; the
  // view, its selection and its zoom stay as they are.
  const bool same_trace = snapshot_ && snapshot_->data == snapshot->data;
  snapshot_ = std::move(snapshot);
  if (!same_trace) {
    tracks_ = snapshot_->tracks ? snapshot_->tracks
                                : std::make_shared<const std::vector<Track>>(buildTracks(snapshot_->trace()));
    kinds_ = analysis::classifyConfigs(snapshot_->trace());
    axis_.setWidth(std::max(1, viewport()->width() - kTitleWidth));
    axis_.setTrace(snapshot_->trace().startNs(), snapshot_->trace().endNs());
    selection_.reset();
    highlight_.reset();
    measured_.reset();
  }
  counters_.clear();
  for (const analysis::DeviceMemory& d : snapshot_->memory.devices) {
    if (d.timeline.empty()) continue;
    counters_.push_back(
        buildCounter(QString::fromStdString("memory · " + snapshot_->trace().deviceLabel(d.device)), d.timeline));
  }
  verticalScrollBar()->setRange(0, std::max(0, contentHeight() - viewport()->height()));
  viewport()->update();
}

int TimelineView::trackHeight(const Track& t) const {
  return static_cast<int>(std::max<size_t>(t.lanes.size(), 1)) * kLaneHeight + kTrackGap;
}

int TimelineView::tracksTop() const {
  return kRulerHeight + static_cast<int>(counters_.size()) * (kCounterHeight + kTrackGap) -
         verticalScrollBar()->value();
}

int TimelineView::contentHeight() const {
  int h = kRulerHeight + static_cast<int>(counters_.size()) * (kCounterHeight + kTrackGap);
  for (const Track& t : tracks()) h += trackHeight(t);
  return h;
}

QColor TimelineView::colourOf(const Lane& lane, size_t i) const {
  switch (lane.kind[i]) {
    case ItemKind::kKernel: return classColour(kinds_[snapshot_->trace().kernels.config[lane.item[i]]].cls);
    case ItemKind::kCopy: return QColor(0x9a, 0x8a, 0x4a);
    case ItemKind::kMemset: return QColor(0xa0, 0xa0, 0x60);
    case ItemKind::kApiCall: return QColor(0x9e, 0xa7, 0xb3);
    case ItemKind::kNvtx: return QColor::fromHsv(static_cast<int>(std::hash<int32_t>{}(lane.label[i]) % 360), 90, 215);
  }
  return Qt::gray;
}

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter p(viewport());
  p.fillRect(viewport()->rect(), palette().base());
  if (!snapshot_) return;
  paintPaused(p);  // under the boxes
  paintIterations(p);
  int top = kRulerHeight - verticalScrollBar()->value();
  for (const Counter& c : counters_) {
    if (top + kCounterHeight >= kRulerHeight) paintCounter(p, c, top);
    top += kCounterHeight + kTrackGap;
  }
  for (const Track& t : tracks()) {
    const int h = trackHeight(t);
    if (top + h >= kRulerHeight && top < viewport()->height()) paintTrack(p, t, top);
    top += h;
  }
  if (highlight_) {
    const double x0 = kTitleWidth + axis_.xOf(highlight_->first), x1 = kTitleWidth + axis_.xOf(highlight_->second);
    p.fillRect(QRectF(x0, kRulerHeight, std::max(2.0, x1 - x0), viewport()->height()), QColor(255, 200, 0, 70));
  }
  paintMeasure(p);
  paintFlow(p);
  paintRuler(p);
  paintIterationLabels(p);
}

// One bar per pixel column, as high as the largest value in it, so a short peak never disappears.
void TimelineView::paintCounter(QPainter& p, const Counter& c, int top) const {
  p.save();
  p.setClipRect(kTitleWidth, std::max(top, kRulerHeight), viewport()->width() - kTitleWidth, kCounterHeight);
  const QColor fill(0x5b, 0x8d, 0xd6);
  for (int x = 0; x < axis_.width() && c.peak > 0; ++x) {
    const int64_t v = maxIn(c, axis_.timeAt(x), axis_.timeAt(x + 1));
    const int h = static_cast<int>(std::lround((kCounterHeight - 4) * static_cast<double>(v) / c.peak));
    p.fillRect(kTitleWidth + x, top + kCounterHeight - h, 1, h, fill);
  }
  p.restore();
  p.setPen(palette().text().color());
  const QString title = c.title + " (peak " + bytesText(c.peak) + ")";
  p.drawText(QRect(4, std::max(top, kRulerHeight), kTitleWidth - 8, kCounterHeight),
             Qt::AlignVCenter | Qt::TextWordWrap, title);
}

// A line at the start of each iteration, under the boxes.
void TimelineView::paintIterations(QPainter& p) const {
  const auto& list = snapshot_->iterations.list;
  auto it = firstVisible(list, axis_);
  // One-pixel rectangles rather than pen strokes: a widened pen goes through the stroker, a hundred times slower.
  const QColor line(0xc8, 0xc8, 0xc8);  // opaque: blending a translucent colour is the slow path
  double last = -1e9;
  for (; it != list.end() && it->start_ns < axis_.viewEnd(); ++it) {
    const double x = kTitleWidth + axis_.xOf(it->start_ns);
    if (x - last < kMinMarkerGap) continue;  // thousands of steps on screen: one line per few pixels
    p.fillRect(static_cast<int>(x), kRulerHeight, 1, viewport()->height() - kRulerHeight, line);
    last = x;
  }
}

// Where the PyTorch bridge paused the recording to time steps unrecorded (the process's kernels, copies and calls
// are not in the trace there): a shaded band, said at its foot, so that nobody reads the gap as the GPU idle.
void TimelineView::paintPaused(QPainter& p) const {
  const analysis::Interval& paused = snapshot_->iterations.paused;
  if (paused.end <= paused.start || paused.end < axis_.viewStart() || paused.start > axis_.viewEnd()) return;
  const double x0 = std::max<double>(kTitleWidth, kTitleWidth + axis_.xOf(paused.start));
  const double x1 = std::min<double>(viewport()->width(), kTitleWidth + axis_.xOf(paused.end));
  const QRectF band(x0, kRulerHeight, std::max(1.0, x1 - x0), viewport()->height() - kRulerHeight);
  p.fillRect(band, kPausedShade);
  const QRectF text = band.adjusted(4, 0, -4, -4);
  if (text.width() < 40) return;  // too narrow to say anything readable: the step labels say "recording paused"
  p.setPen(palette().placeholderText().color());
  p.drawText(text, Qt::AlignBottom | Qt::AlignLeft,
             p.fontMetrics().elidedText("recording paused: gpuscope's PyTorch bridge timed these steps unrecorded",
                                        Qt::ElideRight, static_cast<int>(text.width())));
}

// "step N" (with what kind of step it is) in the ruler's lower row at each iteration's start, where there is room.
void TimelineView::paintIterationLabels(QPainter& p) const {
  const auto& list = snapshot_->iterations.list;
  auto it = firstVisible(list, axis_);
  p.setPen(palette().text().color());
  double free_from = -1e9;  // where the last label drawn ends
  for (; it != list.end() && it->start_ns < axis_.viewEnd(); ++it) {
    const double x = kTitleWidth + axis_.xOf(it->start_ns);
    if (x < free_from) continue;
    const QString label = stepText(snapshot_->iterations, static_cast<size_t>(it - list.begin()));
    p.drawText(QPointF(x + 2, kRulerHeight - 4), label);
    free_from = x + p.fontMetrics().horizontalAdvance(label) + 12;
  }
}

void TimelineView::showRange(int64_t start_ns, int64_t end_ns) {
  const int64_t span = std::max<int64_t>(end_ns - start_ns, 1000);
  axis_.show(start_ns - span / 5, start_ns + span + span / 5);
  highlight_ = std::make_pair(start_ns, std::max(end_ns, start_ns));
  viewport()->update();
}

void TimelineView::paintTrack(QPainter& p, const Track& t, int top) const {
  p.save();
  p.setClipRect(kTitleWidth, std::max(top, kRulerHeight), viewport()->width() - kTitleWidth, trackHeight(t));
  for (size_t l = 0; l < t.lanes.size(); ++l) {
    const Lane& lane = t.lanes[l];
    const int y = top + static_cast<int>(l) * kLaneHeight;
    for (const LaneBox& b : visibleBoxes(lane, axis_)) {
      // Whole pixels: the raster engine fills integer rectangles far faster than fractional ones.
      const int x0 = kTitleWidth + static_cast<int>(std::floor(b.x0));
      const QRect r(x0, y + 1, std::max(1, kTitleWidth + static_cast<int>(std::ceil(b.x1)) - x0), kLaneHeight - 2);
      p.fillRect(r, b.count > 1 ? colourOf(lane, b.first).darker(115) : colourOf(lane, b.first));
      if (b.count == 1 && r.width() > 40) {
        p.setPen(Qt::black);
        p.drawText(r.adjusted(2, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                   p.fontMetrics().elidedText(QString::fromStdString(snapshot_->trace().text(lane.label[b.first])),
                                              Qt::ElideRight, static_cast<int>(r.width()) - 4));
      }
    }
  }
  p.restore();
  p.setPen(palette().text().color());
  p.drawText(QRect(4, std::max(top, kRulerHeight), kTitleWidth - 8, kLaneHeight), Qt::AlignVCenter,
             p.fontMetrics().elidedText(t.title, Qt::ElideRight, kTitleWidth - 8));
  p.setPen(palette().mid().color());
  p.drawLine(0, top + trackHeight(t) - kTrackGap / 2, viewport()->width(), top + trackHeight(t) - kTrackGap / 2);
}

// Ticks at a round step (1, 2 or 5 × a power of ten nanoseconds) about 100 pixels apart, labelled from the
// trace's start with their unit.
void TimelineView::paintRuler(QPainter& p) const {
  p.fillRect(0, 0, viewport()->width(), kRulerHeight, palette().window());
  const double target = axis_.nsPerPixel() * 100;
  const double base = std::pow(10.0, std::floor(std::log10(std::max(target, 1.0))));
  double step = base * 10;
  for (double m : {1.0, 2.0, 5.0}) {
    if (base * m >= target) {
      step = base * m;
      break;
    }
  }
  const auto origin = snapshot_->trace().startNs();
  const auto first = static_cast<int64_t>(std::ceil((axis_.viewStart() - origin) / step));
  p.setPen(palette().text().color());
  for (int64_t k = first;; ++k) {
    const int64_t t = origin + static_cast<int64_t>(std::llround(k * step));
    const double x = kTitleWidth + axis_.xOf(t);
    if (x > viewport()->width()) break;
    p.drawLine(QPointF(x, 2), QPointF(x, 16));
    p.drawText(QPointF(x + 3, 14), durationText(t - origin));
  }
}

std::optional<TimelineView::Hit> TimelineView::itemAt(QPoint point) const {
  if (point.x() < kTitleWidth || point.y() < kRulerHeight) return std::nullopt;
  int top = tracksTop();
  for (size_t ti = 0; ti < tracks().size(); ++ti) {
    const Track& t = tracks()[ti];
    const int h = trackHeight(t);
    if (point.y() >= top && point.y() < top + h) {
      const auto lane = static_cast<size_t>((point.y() - top) / kLaneHeight);
      if (lane >= t.lanes.size()) return std::nullopt;
      const double x = point.x() - kTitleWidth;
      for (const LaneBox& b : visibleBoxes(t.lanes[lane], axis_)) {
        if (x >= b.x0 - 1 && x <= b.x1 + 1) return Hit{ti, lane, b.first};
      }
      return std::nullopt;
    }
    top += h;
  }
  return std::nullopt;
}

QString TimelineView::describe(const Hit& hit) const {
  const Lane& lane = tracks()[hit.track].lanes[hit.lane];
  return describeItem(snapshot_->trace(), lane.kind[hit.index], lane.item[hit.index], snapshot_->collectives);
}

void TimelineView::select(const Hit& hit) {
  selection_ = hit;
  viewport()->update();
  emit selected(describe(hit));
}

std::optional<TimelineView::Hit> TimelineView::launchOf(const Hit& hit) const {
  const Lane& lane = tracks()[hit.track].lanes[hit.lane];
  const int32_t call = launchCallOf(snapshot_->trace(), lane.kind[hit.index], lane.item[hit.index]);
  if (call == analysis::kNone) return std::nullopt;
  const int64_t start = snapshot_->trace().api_calls.start_ns[static_cast<size_t>(call)];
  for (size_t t = 0; t < tracks().size(); ++t) {
    for (size_t l = 0; !tracks()[t].gpu && l < tracks()[t].lanes.size(); ++l) {
      const Lane& calls = tracks()[t].lanes[l];
      auto it = std::lower_bound(calls.start.begin(), calls.start.end(), start);
      for (auto i = static_cast<size_t>(it - calls.start.begin()); i < calls.size() && calls.start[i] == start; ++i) {
        if (calls.kind[i] == ItemKind::kApiCall && calls.item[i] == static_cast<uint32_t>(call)) return Hit{t, l, i};
      }
    }
  }
  return std::nullopt;
}

bool TimelineView::findNext(const QString& text) {
  if (!snapshot_ || text.isEmpty()) return false;
  std::vector<bool> matches(snapshot_->trace().strings.size());
  for (size_t s = 0; s < matches.size(); ++s) {
    matches[s] = QString::fromStdString(snapshot_->trace().strings[s]).contains(text, Qt::CaseInsensitive);
  }
  const int64_t after =
      selection_ ? tracks()[selection_->track].lanes[selection_->lane].start[selection_->index] : axis_.viewStart() - 1;
  std::optional<Hit> best;
  int64_t best_start = INT64_MAX;
  for (size_t t = 0; t < tracks().size(); ++t) {
    for (size_t l = 0; l < tracks()[t].lanes.size(); ++l) {
      const Lane& lane = tracks()[t].lanes[l];
      auto i = static_cast<size_t>(std::upper_bound(lane.start.begin(), lane.start.end(), after) - lane.start.begin());
      for (; i < lane.size() && lane.start[i] < best_start; ++i) {
        if (matches[static_cast<size_t>(lane.label[i])]) {
          best = Hit{t, l, i}, best_start = lane.start[i];
          break;
        }
      }
    }
  }
  if (!best) return false;
  const Lane& lane = tracks()[best->track].lanes[best->lane];
  showRange(lane.start[best->index], lane.end[best->index]);
  select(*best);
  return true;
}

void TimelineView::resizeEvent(QResizeEvent* event) {
  QAbstractScrollArea::resizeEvent(event);
  axis_.setWidth(std::max(1, viewport()->width() - kTitleWidth));
  verticalScrollBar()->setPageStep(viewport()->height());
  verticalScrollBar()->setRange(0, std::max(0, contentHeight() - viewport()->height()));
}

void TimelineView::wheelEvent(QWheelEvent* event) {
  const double notches = event->angleDelta().y() / 120.0;
  axis_.zoom(std::pow(kZoomStep, notches), event->position().x() - kTitleWidth);
  viewport()->update();
  event->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* event) {
  drag_from_ = event->pos();
  if (event->modifiers() & Qt::ShiftModifier) {  // measure: from here to where the mouse is let go
    measuring_ = true;
    const int64_t t = axis_.timeAt(event->pos().x() - kTitleWidth);
    measured_ = std::make_pair(t, t);
    return;
  }
  dragging_ = true;
  if (const std::optional<Hit> hit = itemAt(event->pos())) select(*hit);
}

void TimelineView::mouseMoveEvent(QMouseEvent* event) {
  if (!(event->buttons() & Qt::LeftButton)) return;
  if (measuring_) {
    measured_->second = axis_.timeAt(event->pos().x() - kTitleWidth);
  } else if (dragging_) {
    axis_.pan(drag_from_.x() - event->pos().x());
    drag_from_ = event->pos();
  }
  viewport()->update();
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event) {
  if (measuring_ && measured_) {
    auto [a, b] = *measured_;
    measured_ = std::make_pair(std::min(a, b), std::max(a, b));
    emit selected(QString("Range: %1, from %2 to %3")
                      .arg(durationText(measured_->second - measured_->first))
                      .arg(durationText(measured_->first - snapshot_->trace().startNs()))
                      .arg(durationText(measured_->second - snapshot_->trace().startNs())));
  }
  measuring_ = dragging_ = false;
  event->accept();
}

int TimelineView::laneTop(const Hit& hit) const {
  int top = tracksTop();
  for (size_t t = 0; t < hit.track; ++t) top += trackHeight(tracks()[t]);
  return top + static_cast<int>(hit.lane) * kLaneHeight;
}

// The selected item outlined, and an arrow from the call that launched it to where it ran.
void TimelineView::paintFlow(QPainter& p) const {
  if (!selection_) return;
  const Lane& lane = tracks()[selection_->track].lanes[selection_->lane];
  const double x0 = kTitleWidth + axis_.xOf(lane.start[selection_->index]);
  const double x1 = kTitleWidth + axis_.xOf(lane.end[selection_->index]);
  const int y = laneTop(*selection_);
  p.setPen(QPen(Qt::black, 0));
  p.drawRect(QRectF(x0, y, std::max(2.0, x1 - x0), kLaneHeight - 1));
  const std::optional<Hit> call = launchOf(*selection_);
  if (!call) return;
  const double cx = kTitleWidth + axis_.xOf(tracks()[call->track].lanes[call->lane].start[call->index]);
  const QPointF from(cx, laneTop(*call) + kLaneHeight - 2), to(x0, y + 1);
  p.setPen(QPen(QColor(0xd0, 0x30, 0x30), 0));
  p.drawLine(from, to);
  p.drawEllipse(to, 3, 3);
}

void TimelineView::paintMeasure(QPainter& p) const {
  if (!measured_) return;
  const double a = kTitleWidth + axis_.xOf(std::min(measured_->first, measured_->second));
  const double b = kTitleWidth + axis_.xOf(std::max(measured_->first, measured_->second));
  p.fillRect(QRectF(a, kRulerHeight, std::max(1.0, b - a), viewport()->height()), QColor(60, 120, 220, 50));
}

void TimelineView::keyPressEvent(QKeyEvent* event) {
  const double middle = axis_.width() / 2.0;
  switch (event->key()) {
    case Qt::Key_W: axis_.zoom(kZoomStep, middle); break;
    case Qt::Key_S: axis_.zoom(1 / kZoomStep, middle); break;
    case Qt::Key_A: axis_.pan(-kPanStep * axis_.width()); break;
    case Qt::Key_D: axis_.pan(kPanStep * axis_.width()); break;
    default: QAbstractScrollArea::keyPressEvent(event); return;
  }
  viewport()->update();
}

}  // namespace gpuscope::gui
