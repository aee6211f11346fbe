// The Memory view: a device's live bytes over time stacked by category (the device with the highest peak, or in a
// trace of several GPUs, a job's ranks, the one chosen), the peak and a chosen moment marked, and what XLA said it had
// in use where its readings were recorded (`record --jax`); below, the allocations alive at that moment (the peak to
// start with), largest first, with their category, age and creator; above, the peak, what the allocator reserved and
// used, leaks and pool fragmentation.
#pragma once

#include <QWidget>
#include <memory>

#include "analyzer/memory_categories.h"
#include "analyzer/memory_timeline.h"
#include "gui/table_model.h"
#include "gui/trace_snapshot.h"

class QComboBox;
class QLabel;
class QTableView;

namespace gpuscope::gui {

class AllocationsModel : public TableModel {
  Q_OBJECT

 public:
  enum Column { kSize, kCategory, kAge, kCreator, kColumnCount };
  explicit AllocationsModel(QObject* parent = nullptr);
  // The allocations alive at t on a device (kNone: the one with the highest peak).
  void show(std::shared_ptr<const TraceSnapshot> snapshot, int64_t t, int32_t device = analysis::kNone);
  int64_t time() const { return time_; }
  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;

 private:
  std::shared_ptr<const TraceSnapshot> snapshot_;
  std::vector<int32_t> rows_;  // indexes into snapshot_->memory.allocations
  int64_t time_ = 0;
};

class MemoryChart : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kLegendHeight = 20;
  explicit MemoryChart(QWidget* parent = nullptr);
  void setSeries(const analysis::CategorySeries* series, int64_t start_ns, int64_t end_ns);
  // XLA's readings of what it had in use, drawn as a line; where they are far below the reservation the chart is
  // scaled to them and the reservation runs off its top.
  void setInUse(const std::vector<analysis::MemoryPoint>* in_use);
  void setChosen(int64_t t);
  int64_t timeAtX(int x) const;

 signals:
  void chosen(qint64 t);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;

 private:
  const analysis::CategorySeries* series_ = nullptr;
  const std::vector<analysis::MemoryPoint>* in_use_ = nullptr;
  int64_t in_use_peak_ = 0;  // the most of in_use_, bytes
  int64_t start_ = 0, end_ = 1, chosen_ = 0;
};

class MemoryView : public QWidget {
  Q_OBJECT

 public:
  explicit MemoryView(QWidget* parent = nullptr);
  void setSnapshot(std::shared_ptr<const TraceSnapshot> snapshot);
  void choose(int64_t t);           // shows the allocations alive at t
  void showDevice(int32_t device);  // a device of the trace with memory events: its series, summary and allocations
  int32_t device() const { return device_; }
  QComboBox* devices() const { return devices_; }
  AllocationsModel* allocations() const { return model_; }
  const analysis::CategorySeries& series() const { return series_; }
  QString summaryText() const;

 private:
  std::shared_ptr<const TraceSnapshot> snapshot_;
  analysis::CategorySeries series_;
  std::vector<analysis::MemoryPoint> in_use_;  // XLA's readings on the device shown, where recorded
  int32_t device_ = analysis::kNone;           // the device shown
  QComboBox* devices_;                         // hidden with one device
  QLabel* summary_;
  MemoryChart* chart_;
  AllocationsModel* model_;
  QTableView* table_;
};

}  // namespace gpuscope::gui
