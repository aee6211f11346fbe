#include "gui/memory_view.h"
#include "gui/table_view.h"
#include "gui/text.h"

#include <QComboBox>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include "analyzer/units.h"

namespace gpuscope::gui {

namespace {

const QColor kCategoryColours[analysis::kMemoryCategoryCount] = {QColor(0x4c, 0x72, 0xb0), QColor(0xdd, 0x84, 0x52),
                                                                 QColor(0x55, 0xa8, 0x68), QColor(0xc4, 0x4e, 0x52),
                                                                 QColor(0x81, 0x72, 0xb3), QColor(0x93, 0x93, 0x93)};
const QColor kInUseColour(0xe6, 0x8a, 0x00);

}  // namespace

AllocationsModel::AllocationsModel(QObject* parent)
    : TableModel({tr("Size"), tr("Category"), tr("Age"), tr("Made by")}, parent) {}

void AllocationsModel::show(std::shared_ptr<const TraceSnapshot> snapshot, int64_t t, int32_t device) {
  beginResetModel();
  snapshot_ = std::move(snapshot);
  time_ = t;
  const analysis::DeviceMemory* top = snapshot_ ? snapshot_->memory.peakDevice() : nullptr;
  if (top && device == analysis::kNone) device = top->device;
  rows_ = top ? analysis::aliveAt(snapshot_->memory, device, t) : std::vector<int32_t>{};
  endResetModel();
}

int AllocationsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QVariant AllocationsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const auto i = static_cast<size_t>(rows_[static_cast<size_t>(index.row())]);
  const analysis::Allocation& a = snapshot_->memory.allocations[i];
  if (role == Qt::TextAlignmentRole && index.column() != kCreator) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case kSize: return bytesText(a.bytes);
    case kCategory: return qs(std::string(toString(snapshot_->categories.of_allocation[i])));
    case kAge: return durationText(time_ - a.alloc_ns);
    case kCreator: return qs(analysis::creatorOf(snapshot_->trace(), a));
    default: return {};
  }
}

MemoryChart::MemoryChart(QWidget* parent) : QWidget(parent) { setMinimumHeight(180); }

void MemoryChart::setSeries(const analysis::CategorySeries* series, int64_t start_ns, int64_t end_ns) {
  series_ = series;
  start_ = start_ns;
  end_ = std::max(end_ns, start_ns + 1);
  update();
}

void MemoryChart::setInUse(const std::vector<analysis::MemoryPoint>* in_use) {
  in_use_ = in_use && !in_use->empty() ? in_use : nullptr;
  in_use_peak_ = 0;
  if (in_use_) {
    for (const analysis::MemoryPoint& point : *in_use_) in_use_peak_ = std::max(in_use_peak_, point.live_bytes);
  }
  update();
}

void MemoryChart::setChosen(int64_t t) {
  chosen_ = t;
  update();
}

int64_t MemoryChart::timeAtX(int x) const {
  return start_ +
         static_cast<int64_t>(static_cast<double>(x) / std::max(1, width()) * static_cast<double>(end_ - start_));
}

// One column per pixel, each category stacked on the ones before it, scaled to the peak (to XLA's most in use
// where that is under a quarter of it: its reservation would flatten the line to the axis), XLA's line over them.
void MemoryChart::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  if (!series_ || series_->peak_total <= 0) return;
  const int plot = height() - kLegendHeight;
  int64_t top = series_->peak_total;
  if (in_use_peak_ > 0 && 4 * in_use_peak_ < top) top = in_use_peak_ + in_use_peak_ / 4;
  const double scale = (plot - 4) / static_cast<double>(top);
  for (int x = 0; x < width(); ++x) {
    const auto at = series_->at(timeAtX(x));
    double y = plot;
    for (size_t c = 0; c < at.size() && y > 0; ++c) {
      const double h = std::min(static_cast<double>(at[c]) * scale, y);
      p.fillRect(QRectF(x, y - h, 1, h), kCategoryColours[c]);
      y -= h;
    }
  }
  if (in_use_) {
    p.setPen(QPen(kInUseColour, 2));
    const auto height_at = [&](int px) {
      return plot - static_cast<double>(analysis::liveAt(*in_use_, timeAtX(px))) * scale;
    };
    for (int x = 1; x < width(); ++x) p.drawLine(QPointF(x - 1, height_at(x - 1)), QPointF(x, height_at(x)));
  }
  auto marker = [&](int64_t t, QColor colour) {
    const double x = static_cast<double>(t - start_) / static_cast<double>(end_ - start_) * width();
    p.setPen(QPen(colour, 1, Qt::DashLine));
    p.drawLine(QPointF(x, 0), QPointF(x, plot));
  };
  marker(series_->peak_time, Qt::red);
  marker(chosen_, Qt::black);
  int x = 4;
  auto legend = [&](const QString& name, QColor colour) {
    p.fillRect(x, plot + 5, 10, 10, colour);
    p.setPen(palette().text().color());
    p.drawText(x + 14, plot + 15, name);
    x += 24 + p.fontMetrics().horizontalAdvance(name);
  };
  for (int c = 0; c < analysis::kMemoryCategoryCount; ++c)
    legend(qs(std::string(toString(static_cast<analysis::MemoryCategory>(c)))), kCategoryColours[c]);
  if (in_use_)
    legend(top < series_->peak_total ? tr("XLA in use (the reservation runs off the top)") : tr("XLA in use"),
           kInUseColour);
}

void MemoryChart::mousePressEvent(QMouseEvent* event) { emit chosen(timeAtX(event->pos().x())); }

MemoryView::MemoryView(QWidget* parent)
    : QWidget(parent),
      devices_(new QComboBox(this)),
      summary_(new QLabel(this)),
      chart_(new MemoryChart(this)),
      model_(new AllocationsModel(this)),
      table_(new QTableView(this)) {
  summary_->setWordWrap(true);
  setUpTable(table_, model_, AllocationsModel::kCreator);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(chart_);
  split->addWidget(table_);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(devices_, 0, Qt::AlignLeft);
  layout->addWidget(summary_);
  layout->addWidget(split, 1);
  connect(chart_, &MemoryChart::chosen, this, [this](qint64 t) { choose(t); });
  connect(devices_, &QComboBox::activated, this, [this](int i) { showDevice(devices_->itemData(i).toInt()); });
  devices_->hide();
}

// The devices with memory events to choose from (a job's ranks: one GPU each), the one with the highest peak shown.
void MemoryView::setSnapshot(std::shared_ptr<const TraceSnapshot> snapshot) {
  snapshot_ = std::move(snapshot);
  devices_->clear();
  for (const analysis::DeviceMemory& d : snapshot_->memory.devices) {
    if (d.peak_bytes > 0) devices_->addItem(qs(snapshot_->trace().deviceLabel(d.device)), d.device);
  }
  devices_->setVisible(devices_->count() > 1);
  const analysis::DeviceMemory* top = snapshot_->memory.peakDevice();
  showDevice(top ? top->device : analysis::kNone);
}

void MemoryView::showDevice(int32_t device) {
  device_ = device;
  if (const int i = devices_->findData(device); i >= 0) devices_->setCurrentIndex(i);
  series_ = analysis::categorySeries(snapshot_->memory, snapshot_->categories, device);
  // From the first allocation on: a long set-up before it would squeeze the whole story to one edge.
  const int64_t first = series_.time.empty() ? snapshot_->trace().startNs() : series_.time.front();
  chart_->setSeries(&series_, first, std::max(snapshot_->trace().endNs(), first + 1));
  const std::vector<analysis::DeviceMemory>& devices = snapshot_->memory.devices;  // by device ordinal
  const analysis::DeviceMemory* top =
      device >= 0 && static_cast<size_t>(device) < devices.size() ? &devices[static_cast<size_t>(device)] : nullptr;
  in_use_ = top ? analysis::allocatorInUse(snapshot_->trace(), top->device) : std::vector<analysis::MemoryPoint>{};
  chart_->setInUse(&in_use_);
  QString text =
      top ? qs("Peak " + analysis::formatBytes(top->peak_bytes) + " on " + snapshot_->trace().deviceLabel(top->device) +
               "; CUDA's peak " + analysis::formatBytes(top->cuda_peak_bytes))
          : tr("No device memory events in this trace.");
  const analysis::AllocatorUsage xla =
      top ? analysis::allocatorUsage(snapshot_->trace(), top->device) : analysis::AllocatorUsage{};
  if (xla.readings > 0) {
    text +=
        qs("\nXLA in use: " + analysis::formatBytes(xla.peak_bytes) + " at its peak (" + std::to_string(xla.readings) +
           " readings of its memory_stats(), record --jax), inside what it reserved from CUDA");
  }
  if (snapshot_->memory.leak.growing)
    text += qs("  ·  Growing: " + snapshot_->memory.leak.growthWords() + " (a leak?)");
  for (const analysis::PoolUsage& pool : snapshot_->pools) {
    if (pool.slackBytes() <= 0) continue;
    text += "\nMemory pool 0x" + QString::number(static_cast<qulonglong>(pool.pool), 16) +
            qs(": reserved up to " + analysis::formatBytes(pool.peak_reserved_bytes) + "; at worst " +
               analysis::formatBytes(pool.slackBytes()) + " reserved but not handed out (fragmentation) while " +
               analysis::formatBytes(pool.worst.used_bytes) + " was in use");
  }
  summary_->setText(text);
  choose(series_.peak_time);
}

QString MemoryView::summaryText() const { return summary_->text(); }

void MemoryView::choose(int64_t t) {
  chart_->setChosen(t);
  model_->show(snapshot_, t, device_);
}

}  // namespace gpuscope::gui
