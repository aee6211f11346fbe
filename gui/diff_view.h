// The Diff view: this trace against another (File ▸ Compare with…, or --diff), as `gpuscope diff` shows
// them: the steady iteration, peak memory, GPU busy time and kernel count before and after, then kernel
// time per class and per kernel, largest change first, and the kernels that appeared or disappeared.
#pragma once

#include <QWidget>
#include <memory>

#include "analyzer/trace_diff.h"
#include "gui/table_model.h"
#include "gui/trace_snapshot.h"

class QLabel;
class QTableView;

namespace gpuscope::gui {

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

class DiffView : public QWidget {
  Q_OBJECT

 public:
  explicit DiffView(QWidget* parent = nullptr);
  void setDiff(std::shared_ptr<const DiffSnapshot> diff);
  ChangesModel* classes() const { return classes_; }
  ChangesModel* kernels() const { return kernels_; }
  QString summaryText() const;

 private:
  std::shared_ptr<const DiffSnapshot> diff_;
  QLabel* summary_;
  ChangesModel* classes_;
  ChangesModel* kernels_;
};

}  // namespace gpuscope::gui
