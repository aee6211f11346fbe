#include "gui/advisor_view.h"

#include <algorithm>

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableView>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "advisor/report.h"
#include "analyzer/units.h"
#include "gui/table_view.h"

namespace gpuscope::gui {

AdvisorView::AdvisorView(QWidget* parent)
    : QWidget(parent),
      model_(new FindingsModel(this)),
      ranks_model_(new RanksModel(this)),
      header_(new QLabel(this)),
      ranks_(new QTableView(this)),
      table_(new QTableView(this)),
      details_(new QTextBrowser(this)) {
  header_->setWordWrap(true);
  header_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  setUpTable(table_, model_, FindingsModel::kTitle);
  setUpTable(ranks_, ranks_model_, RanksModel::kDevice);
  ranks_->hide();
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(table_);
  split->addWidget(details_);
  split->setStretchFactor(1, 2);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(header_);
  layout->addWidget(ranks_);
  layout->addWidget(split, 1);
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { showDetails(current); });
  connect(table_, &QAbstractItemView::activated, this, [this](const QModelIndex& index) {
    const advisor::Finding* f = model_->finding(index);
    for (const advisor::Evidence& e : f ? f->evidence : std::vector<advisor::Evidence>{}) {
      for (const advisor::TraceRef& r : e.refs) {
        if (r.end_ns > 0) return emit showOnTimeline(r.start_ns, r.end_ns);
      }
    }
  });
}

void AdvisorView::setSnapshot(std::shared_ptr<const TraceSnapshot> snapshot) {
  snapshot_ = std::move(snapshot);
  model_->setSnapshot(snapshot_);
  const advisor::Advice& a = snapshot_->advice;
  const std::string job = advisor::jobText(a), failed = advisor::failureText(a);
  const std::string measured = "Step: " + advisor::stepText(a) +
                               "  ·  Peak memory: " + analysis::formatBytes(a.measured.peak_memory_bytes) + " (" +
                               a.memory_basis + ")";
  const std::string predicted =
      failed.empty() ? "\nPredicted with every fix: " + advisor::predictionText(a) + "\nPlan: " + advisor::planText(a)
                     : "";
  header_->setText(QString::fromStdString((failed.empty() ? "" : "FAILED RUN: " + failed + "\n") +
                                          (job.empty() ? "" : "Job: " + job + "\n") + measured + predicted));
  ranks_model_->setSnapshot(snapshot_);
  ranks_->setVisible(!a.job.ranks.empty());
  // As tall as its rows, up to eight: the findings below are what the view is for.
  const int rows = std::min(ranks_model_->rowCount(), 8);
  ranks_->setMaximumHeight(ranks_->horizontalHeader()->sizeHint().height() +
                           rows * ranks_->verticalHeader()->defaultSectionSize() + 2 * ranks_->frameWidth());
  details_->clear();
  if (model_->rowCount() > 0) selectFinding(0);
}

QString AdvisorView::headerText() const { return header_->text(); }

void AdvisorView::selectFinding(int row) { table_->selectRow(row); }

void AdvisorView::showDetails(const QModelIndex& index) {
  const advisor::Finding* f = model_->finding(index);
  details_->setHtml(f ? findingHtml(*f, snapshot_->advice.per_step) : QString());
}

}  // namespace gpuscope::gui
