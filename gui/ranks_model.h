// The job summary of a multi-rank trace (torchrun, mpirun, srun): one row per rank with its step and what
// fills it (compute, communication alone and beside compute, copies, idle, its host's own work), where it
// stands at the collectives, and its peak memory, as `gpuscope stats --report ranks` prints them. The
// slowest rank, whose step is the job's, and the rank the others wait for are marked.
#pragma once

#include <memory>

#include "gui/table_model.h"
#include "gui/trace_snapshot.h"

namespace gpuscope::gui {

class RanksModel : public TableModel {
  Q_OBJECT

 public:
  enum Column {
    kRank,
    kStep,
    kCompute,
    kCommAlone,
    kCommOverlapped,
    kCopies,
    kIdle,
    kHost,
    kOwnCode,
    kLast,
    kLate,
    kPeak,
    kDevice,
    kColumnCount
  };

  explicit RanksModel(QObject* parent = nullptr);
  void setSnapshot(std::shared_ptr<const TraceSnapshot> snapshot);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;

 private:
  std::shared_ptr<const TraceSnapshot> snapshot_;
};

}  // namespace gpuscope::gui
