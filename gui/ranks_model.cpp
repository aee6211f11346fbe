#include "gui/ranks_model.h"

#include <QBrush>
#include <QColor>
#include <QFont>

#include "gui/text.h"

namespace gpuscope::gui {

RanksModel::RanksModel(QObject* parent)
    : TableModel({tr("Rank"), tr("Step"), tr("Compute"), tr("Comm alone"), tr("Comm beside compute"), tr("Copies"),
                  tr("GPU idle"), tr("Host work"), tr("Own code"), tr("Last at collectives"), tr("Late by"),
                  tr("Peak memory"), tr("Device")},
                 parent) {}

void RanksModel::setSnapshot(std::shared_ptr<const TraceSnapshot> snapshot) {
  beginResetModel();
  snapshot_ = std::move(snapshot);
  endResetModel();
}

int RanksModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !snapshot_ ? 0 : static_cast<int>(snapshot_->advice.job.ranks.size());
}

QVariant RanksModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const advisor::Advice& a = snapshot_->advice;
  const auto row = static_cast<size_t>(index.row());
  const analysis::RankStep& r = a.job.ranks[row];
  const bool slowest = row == a.job.slowest;
  const bool waited_for = a.job.straggler && a.job.straggler->rank_index == row;
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case kRank:
        return QString::number(r.rank) + (slowest ? tr(" · slowest") : QString()) +
               (waited_for ? tr(" · others wait for it") : QString());
      case kStep: return durationText(r.step_ns);
      case kCompute: return durationText(r.compute_ns);
      case kCommAlone: return durationText(r.comm_alone_ns);
      case kCommOverlapped: return durationText(r.comm_overlapped_ns);
      case kCopies: return durationText(r.copy_ns);
      case kIdle: return durationText(r.idle_ns);
      case kHost: return r.host_ns > 0 ? durationText(r.host_ns) : tr("not measured");
      case kOwnCode: return r.host_ns > 0 ? durationText(r.away_ns) : tr("not measured");
      case kLast: return qs(analysis::formatShare(r.last_share));
      case kLate: return durationText(r.late_ns);
      case kPeak: return bytesText(r.peak_bytes);
      case kDevice: return row < a.rank_devices.size() ? qs(a.rank_devices[row]) : QString();
      default: return {};
    }
  }
  if (role == Qt::FontRole && slowest) {
    QFont bold;
    bold.setBold(true);
    return bold;
  }
  if (role == Qt::ForegroundRole && waited_for && index.column() == kRank) return QBrush(QColor(0xc6, 0x28, 0x28));
  if (role == Qt::ToolTipRole && index.column() == kOwnCode) {
    return tr(
        "of the median step, the stretches of 1 ms or more in which the rank's process made no CUDA call: its "
        "own code (Python, I/O, loading data, a sleep)");
  }
  if (role == Qt::ToolTipRole && index.column() != kRank && index.column() != kDevice) {
    return tr(
        "per step, from one step's start to the next one's; compute, communication, copies and idle add up "
        "to the step");
  }
  return {};
}

}  // namespace gpuscope::gui
