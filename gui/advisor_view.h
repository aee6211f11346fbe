// The Advisor view: the step, peak memory and prediction of `gpuscope advise`, for a multi-rank job its ranks
// side by side, its findings, and the selected finding in full; double-clicking a finding shows its evidence
// on the timeline.
#pragma once

#include <QWidget>

#include "gui/findings_model.h"
#include "gui/ranks_model.h"

class QLabel;
class QTableView;
class QTextBrowser;

namespace gpuscope::gui {

class AdvisorView : public QWidget {
  Q_OBJECT

 public:
  explicit AdvisorView(QWidget* parent = nullptr);
  void setSnapshot(std::shared_ptr<const TraceSnapshot> snapshot);
  void selectFinding(int row);
  QTableView* table() const { return table_; }
  QString headerText() const;  // the step, peak and prediction above the findings (what a failed run says first)
  QTableView* ranks() const { return ranks_; }  // hidden for a single process
  QTextBrowser* details() const { return details_; }

 signals:
  void showOnTimeline(qint64 start_ns, qint64 end_ns);  // a finding's first piece of evidence with a time

 private:
  void showDetails(const QModelIndex& index);

  std::shared_ptr<const TraceSnapshot> snapshot_;
  FindingsModel* model_;
  RanksModel* ranks_model_;
  QLabel* header_;
  QTableView* ranks_;
  QTableView* table_;
  QTextBrowser* details_;
};

}  // namespace gpuscope::gui
