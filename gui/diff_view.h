// The Diff view: this trace against another (File ▸ Compare with…, or --diff), as `gpuscope diff` shows
// them: the steady iteration, peak memory, GPU busy time and kernel count before and after, then kernel
// time per class and per kernel, largest change first, and the kernels that appeared or disappeared; each
// iteration's time before and after; for two runs of a job, each rank's step; and the two timelines one above the other
// on one time scale, each from its first steady iteration, so what got shorter shows.
#pragma once

#include <QWidget>
#include <memory>

#include "analyzer/trace_diff.h"
#include "gui/table_model.h"
#include "gui/trace_snapshot.h"

class QLabel;
class QTabWidget;
class QTableView;

namespace gpuscope::gui {

class TimelineView;

struct DiffSnapshot {
  std::shared_ptr<const TraceSnapshot> before, after;
  analysis::TraceDiff diff;
};

// The other trace analysed and compared; in the calling thread (the window runs it in the background).
Result<std::shared_ptr<const DiffSnapshot>> compareTraces(std::shared_ptr<const TraceSnapshot> before,
                                                          const std::string& after_path);

class ChangesModel : public TableModel {
  Q_OBJECT

 public:
  enum Column { kName, kBefore, kAfter, kChange, kPercent, kLaunchesBefore, kLaunchesAfter, kColumnCount };
  explicit ChangesModel(QObject* parent = nullptr);
  void setRows(std::vector<analysis::KernelChange> rows);
  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;

 private:
  std::vector<analysis::KernelChange> rows_;
};

// Iteration k of each run, side by side: its time, the change, its kernels; warm-up iterations marked.
class IterationsModel : public TableModel {
  Q_OBJECT

 public:
  enum Column { kIteration, kBefore, kAfter, kChange, kPercent, kKernelsBefore, kKernelsAfter, kColumnCount };
  explicit IterationsModel(QObject* parent = nullptr);
  void setRuns(const analysis::Iterations& before, const analysis::Iterations& after);
  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;

 private:
  std::vector<analysis::Iteration> before_, after_;
};

// Each rank of two runs of a job, side by side: its step and what fills it (`gpuscope diff`'s ranks).
class RankChangesModel : public TableModel {
  Q_OBJECT

 public:
  enum Column {
    kRank,
    kStepBefore,
    kStepAfter,
    kPercent,
    kComputeBefore,
    kComputeAfter,
    kCommBefore,
    kCommAfter,
    kIdleBefore,
    kIdleAfter,
    kHostBefore,
    kHostAfter,
    kColumnCount
  };
  explicit RankChangesModel(QObject* parent = nullptr);
  void setRows(std::vector<analysis::RankChange> rows);
  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;

 private:
  std::vector<analysis::RankChange> rows_;
};

class DiffView : public QWidget {
  Q_OBJECT

 public:
  explicit DiffView(QWidget* parent = nullptr);
  void setDiff(std::shared_ptr<const DiffSnapshot> diff);
  ChangesModel* classes() const { return classes_; }
  ChangesModel* kernels() const { return kernels_; }
  IterationsModel* iterations() const { return iterations_; }
  RankChangesModel* ranks() const { return ranks_; }  // empty unless both runs are jobs of several ranks
  TimelineView* beforeTimeline() const { return before_timeline_; }
  TimelineView* afterTimeline() const { return after_timeline_; }
  QString summaryText() const;

 private:
  void alignTimelines();
  std::shared_ptr<const DiffSnapshot> diff_;
  QLabel* summary_;
  ChangesModel* classes_;
  ChangesModel* kernels_;
  IterationsModel* iterations_;
  RankChangesModel* ranks_;
  QTabWidget* tabs_;
  TimelineView* before_timeline_;
  TimelineView* after_timeline_;
};

}  // namespace gpuscope::gui
