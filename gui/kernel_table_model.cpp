#include "gui/kernel_table_model.h"
#include "gui/text.h"

#include "analyzer/units.h"

namespace gpuscope::gui {

KernelTableModel::KernelTableModel(QObject* parent)
    : TableModel({tr("Name"), tr("Class"), tr("Precision"), tr("Count"), tr("Total"), tr("Mean"), tr("Median"),
                  tr("Min"), tr("Max"), tr("GPU time")},
                 parent) {}

void KernelTableModel::setSnapshot(std::shared_ptr<const TraceSnapshot> snapshot) {
  beginResetModel();
  snapshot_ = std::move(snapshot);
  by_rank_ = snapshot_ ? analysis::kernelsByRank(snapshot_->trace()) : std::vector<analysis::RankKernelSummary>{};
  rebuild();
  endResetModel();
}

void KernelTableModel::setGrouping(Grouping grouping) {
  if (grouping == grouping_) return;
  beginResetModel();
  grouping_ = grouping;
  rebuild();
  endResetModel();
}

void KernelTableModel::rebuild() {
  rows_.clear();
  if (!snapshot_) return;
  if (grouping_ == Grouping::kByName) {
    for (const auto& k : snapshot_->stats.kernels) {
      rows_.push_back(
          {qs(k.name), qs(toString(k.kind.cls)), qs(toString(k.kind.precision)), {}, k.time, k.share_of_gpu});
    }
  } else if (grouping_ == Grouping::kByRank) {
    for (const auto& [rank, k] : by_rank_) {
      rows_.push_back(
          {qs(k.name), qs(toString(k.kind.cls)), qs(toString(k.kind.precision)), rank, k.time, k.share_of_gpu});
    }
  } else {
    for (const auto& k : snapshot_->stats.kernel_classes) {
      rows_.push_back({qs(toString(k.cls)) + " (" + QString::number(k.distinct_kernels) + " kernels)",
                       qs(toString(k.cls)),
                       qs(toString(k.precision)),
                       {},
                       k.time,
                       k.share_of_gpu});
    }
  }
}

std::optional<std::pair<int64_t, int64_t>> KernelTableModel::firstRun(int row) const {
  if (!snapshot_ || row < 0 || row >= rowCount()) return std::nullopt;
  const analysis::TraceData& t = snapshot_->trace();
  const std::vector<analysis::KernelKind> kinds =
      grouping_ == Grouping::kByClass ? analysis::classifyConfigs(t) : std::vector<analysis::KernelKind>{};
  const Row& r = rows_[static_cast<size_t>(row)];
  const std::string name = r.name.toStdString();
  for (size_t k = 0; k < t.kernels.size(); ++k) {
    const bool match = grouping_ != Grouping::kByClass
                           ? t.kernelName(k) == name && (!r.rank || t.sessions[t.kernels.session[k]].rank == r.rank)
                           : qs(toString(kinds[t.kernels.config[k]].cls)) == r.cls &&
                                 qs(toString(kinds[t.kernels.config[k]].precision)) == r.precision;
    if (match) return std::make_pair(t.kernels.start_ns[k], t.kernels.end_ns[k]);
  }
  return std::nullopt;
}

int KernelTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QVariant KernelTableModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Row& row = rows_[static_cast<size_t>(index.row())];
  if (role == Qt::DisplayRole) return display(row, index.column());
  if (role == kSortRole) return sortValue(row, index.column());
  if (role == Qt::ToolTipRole && index.column() == kName) return display(row, kName);
  if (role == Qt::TextAlignmentRole && index.column() >= kCount) return int(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

QVariant KernelTableModel::display(const Row& row, int column) const {
  switch (column) {
    case kName: return row.rank ? QString("rank %1 · %2").arg(*row.rank).arg(row.name) : row.name;
    case kClass: return row.cls;
    case kPrecision: return row.precision;
    case kCount: return qs(analysis::formatCount(row.time.count));
    case kTotal: return durationText(row.time.total);
    case kMean: return durationText(static_cast<int64_t>(row.time.mean()));
    case kMedian: return durationText(row.time.median);
    case kMin: return durationText(row.time.min);
    case kMax: return durationText(row.time.max);
    case kShare: return qs(analysis::formatShare(row.share));
    default: return {};
  }
}

QVariant KernelTableModel::sortValue(const Row& row, int column) const {
  switch (column) {
    case kName: return display(row, kName);
    case kClass: return row.cls;
    case kPrecision: return row.precision;
    case kCount: return qlonglong(row.time.count);
    case kTotal: return qlonglong(row.time.total);
    case kMean: return row.time.mean();
    case kMedian: return qlonglong(row.time.median);
    case kMin: return qlonglong(row.time.min);
    case kMax: return qlonglong(row.time.max);
    case kShare: return row.share;
    default: return {};
  }
}

}  // namespace gpuscope::gui
