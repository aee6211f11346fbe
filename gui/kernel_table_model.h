// The kernel table: the kernels of a trace summarised by name or by class (with precision), as in
// `gpuscope stats --report kernels|kernel_classes`, or, in a job of several ranks, by rank and name. Display text
// carries units; the sort role gives the raw number, so sorting by a column sorts by value, not by text.
#pragma once

#include <memory>
#include <optional>
#include <utility>

#include "gui/table_model.h"
#include "gui/trace_snapshot.h"

namespace gpuscope::gui {

class KernelTableModel : public TableModel {
  Q_OBJECT

 public:
  enum class Grouping { kByName, kByClass, kByRank };
  enum Column { kName, kClass, kPrecision, kCount, kTotal, kMean, kMedian, kMin, kMax, kShare, kColumnCount };
  static constexpr int kSortRole = Qt::UserRole + 1;

  explicit KernelTableModel(QObject* parent = nullptr);
  void setSnapshot(std::shared_ptr<const TraceSnapshot> snapshot);  // swaps the whole table in
  void setGrouping(Grouping grouping);
  Grouping grouping() const { return grouping_; }
  // Whether the trace is a job of several ranks (kByRank has rows).
  bool hasRanks() const { return !by_rank_.empty(); }
  // Where a row's kernel (by name, on its rank) or class first ran: start and end; nothing without one.
  std::optional<std::pair<int64_t, int64_t>> firstRun(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;

 private:
  struct Row {
    QString name, cls, precision;  // name: the kernel's, or the class's words
    std::optional<int64_t> rank;   // kByRank: shown before the kernel's name
    analysis::DurationStats time;
    double share = 0;
  };
  QVariant display(const Row& row, int column) const;
  QVariant sortValue(const Row& row, int column) const;
  void rebuild();

  std::shared_ptr<const TraceSnapshot> snapshot_;
  Grouping grouping_ = Grouping::kByName;
  std::vector<Row> rows_;
  std::vector<analysis::RankKernelSummary> by_rank_;  // computed with the snapshot
};

}  // namespace gpuscope::gui
