// The Kernels view: the kernel table, filtered by a name typed in and grouped by name or by class (or, in a
// job of several ranks, by rank and name); double-clicking a row shows where its kernel first ran on the timeline.
#pragma once

#include <QWidget>

#include "gui/kernel_table_model.h"

class QComboBox;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;

namespace gpuscope::gui {

class KernelsView : public QWidget {
  Q_OBJECT

 public:
  explicit KernelsView(QWidget* parent = nullptr);
  void setSnapshot(std::shared_ptr<const TraceSnapshot> snapshot);
  void setFilter(const QString& text);
  void setGrouping(KernelTableModel::Grouping grouping);
  QTableView* table() const { return table_; }
  QSortFilterProxyModel* proxy() const { return proxy_; }
  QComboBox* grouping() const { return grouping_; }
  const KernelTableModel* model() const { return model_; }

 signals:
  void showOnTimeline(qint64 start_ns, qint64 end_ns);  // double-click: where the row's kernel first ran

 private:
  KernelTableModel* model_;
  QSortFilterProxyModel* proxy_;
  QLineEdit* filter_;
  QComboBox* grouping_;
  QTableView* table_;
};

}  // namespace gpuscope::gui
