#include "gui/diff_view.h"
#include "gui/table_view.h"
#include "gui/text.h"

#include <QLabel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include "analyzer/units.h"
#include "gui/timeline_view.h"

namespace gpuscope::gui {

namespace {

QString line(const char* what, const analysis::Change& c, bool bytes) {
  auto text = [&](double v) {
    return bytes ? bytesText(static_cast<int64_t>(v)) : durationText(static_cast<int64_t>(v));
  };
  return QString("<tr><td>%1</td><td align=right>%2</td><td>→</td><td align=right>%3</td><td>%4</td></tr>")
      .arg(what, text(c.before), text(c.after), qs(analysis::percentText(c)));
}

QTableView* tableOf(QAbstractItemModel* model, QWidget* parent) {
  auto* table = new QTableView(parent);
  setUpTable(table, model, 0);  // the name, or the iteration
  return table;
}

// The first steady iteration's start and length, or the whole run's when it has none.
std::pair<int64_t, int64_t> firstSteady(const TraceSnapshot& s) {
  for (const analysis::Iteration& it : s.iterations.list) {
    if (!it.warmup) return {it.start_ns, it.durationNs()};
  }
  return {s.trace().startNs(), s.trace().durationNs()};
}

constexpr int kRanksTab = 2;  // "By rank", shown for two runs of a job

QString changeText(double delta) { return (delta > 0 ? "+" : "") + durationText(static_cast<int64_t>(delta)); }

}  // namespace

Result<std::shared_ptr<const DiffSnapshot>> compareTraces(std::shared_ptr<const TraceSnapshot> before,
                                                          const std::string& after_path) {
  Result<std::shared_ptr<const TraceSnapshot>> after = analyseTrace(after_path);
  if (!after) return after.status();
  auto d = std::make_shared<DiffSnapshot>();
  d->before = std::move(before);
  d->after = std::move(*after);
  d->diff = analysis::diffTraces(d->before->trace(), d->after->trace());
  return std::shared_ptr<const DiffSnapshot>(std::move(d));
}

ChangesModel::ChangesModel(QObject* parent)
    : TableModel({tr("Name"), tr("Before"), tr("After"), tr("Change"), tr("Change (%)"), tr("Launches before"),
                  tr("Launches after")},
                 parent) {}

void ChangesModel::setRows(std::vector<analysis::KernelChange> rows) {
  beginResetModel();
  rows_ = std::move(rows);
  endResetModel();
}

int ChangesModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QVariant ChangesModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const analysis::KernelChange& k = rows_[static_cast<size_t>(index.row())];
  if (role == Qt::TextAlignmentRole && index.column() != kName) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ForegroundRole && index.column() == kChange && k.time_ns.delta() != 0) {
    return QColor(k.time_ns.delta() < 0 ? Qt::darkGreen : Qt::darkRed);
  }
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case kName: return qs(k.name);
    case kBefore: return durationText(static_cast<int64_t>(k.time_ns.before));
    case kAfter: return durationText(static_cast<int64_t>(k.time_ns.after));
    case kChange: return changeText(k.time_ns.delta());
    case kPercent: return qs(analysis::percentText(k.time_ns));
    case kLaunchesBefore: return QString::number(k.count.before, 'f', 0);
    case kLaunchesAfter: return QString::number(k.count.after, 'f', 0);
    default: return {};
  }
}

IterationsModel::IterationsModel(QObject* parent)
    : TableModel({tr("Iteration"), tr("Before"), tr("After"), tr("Change"), tr("Change (%)"), tr("Kernels before"),
                  tr("Kernels after")},
                 parent) {}

void IterationsModel::setRuns(const analysis::Iterations& before, const analysis::Iterations& after) {
  beginResetModel();
  before_ = before.list;
  after_ = after.list;
  endResetModel();
}

int IterationsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(std::max(before_.size(), after_.size()));
}

QVariant IterationsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const auto row = static_cast<size_t>(index.row());
  const analysis::Iteration* b = row < before_.size() ? &before_[row] : nullptr;
  const analysis::Iteration* a = row < after_.size() ? &after_[row] : nullptr;
  const analysis::Change time{b ? static_cast<double>(b->durationNs()) : 0,
                              a ? static_cast<double>(a->durationNs()) : 0};
  if (role == Qt::TextAlignmentRole && index.column() != kIteration) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ForegroundRole && index.column() == kChange && a && b && time.delta() != 0) {
    return QColor(time.delta() < 0 ? Qt::darkGreen : Qt::darkRed);
  }
  if (role != Qt::DisplayRole) return {};
  const bool warmup = (b && b->warmup) || (a && a->warmup);
  switch (index.column()) {
    case kIteration: return QString::number(row + 1) + (warmup ? tr(" (warm-up)") : QString());
    case kBefore: return b ? durationText(b->durationNs()) : QString();
    case kAfter: return a ? durationText(a->durationNs()) : QString();
    case kChange: return a && b ? changeText(time.delta()) : QString();
    case kPercent: return a && b ? qs(analysis::percentText(time)) : QString();
    case kKernelsBefore: return b ? QString::number(b->kernels) : QString();
    case kKernelsAfter: return a ? QString::number(a->kernels) : QString();
    default: return {};
  }
}

RankChangesModel::RankChangesModel(QObject* parent)
    : TableModel({tr("Rank"), tr("Step before"), tr("Step after"), tr("Change (%)"), tr("Compute before"),
                  tr("Compute after"), tr("Comm alone before"), tr("Comm alone after"), tr("GPU idle before"),
                  tr("GPU idle after"), tr("Host work before"), tr("Host work after")},
                 parent) {}

void RankChangesModel::setRows(std::vector<analysis::RankChange> rows) {
  beginResetModel();
  rows_ = std::move(rows);
  endResetModel();
}

int RankChangesModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QVariant RankChangesModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const analysis::RankChange& r = rows_[static_cast<size_t>(index.row())];
  if (role == Qt::TextAlignmentRole && index.column() != kRank) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ForegroundRole && index.column() == kPercent && r.step_ns.delta() != 0) {
    return QColor(r.step_ns.delta() < 0 ? Qt::darkGreen : Qt::darkRed);
  }
  if (role != Qt::DisplayRole) return {};
  const auto ns = [](double v) { return durationText(static_cast<int64_t>(v)); };
  switch (index.column()) {
    case kRank: return QString::number(r.rank);
    case kStepBefore: return ns(r.step_ns.before);
    case kStepAfter: return ns(r.step_ns.after);
    case kPercent: return qs(analysis::percentText(r.step_ns));
    case kComputeBefore: return ns(r.compute_ns.before);
    case kComputeAfter: return ns(r.compute_ns.after);
    case kCommBefore: return ns(r.comm_alone_ns.before);
    case kCommAfter: return ns(r.comm_alone_ns.after);
    case kIdleBefore: return ns(r.idle_ns.before);
    case kIdleAfter: return ns(r.idle_ns.after);
    case kHostBefore: return ns(r.host_ns.before);
    case kHostAfter: return ns(r.host_ns.after);
    default: return {};
  }
}

DiffView::DiffView(QWidget* parent)
    : QWidget(parent),
      summary_(new QLabel(this)),
      classes_(new ChangesModel(this)),
      kernels_(new ChangesModel(this)),
      iterations_(new IterationsModel(this)),
      ranks_(new RankChangesModel(this)),
      tabs_(new QTabWidget(this)),
      before_timeline_(new TimelineView(this)),
      after_timeline_(new TimelineView(this)) {
  summary_->setTextFormat(Qt::RichText);
  summary_->setText(tr("Compare this trace with another: File ▸ Compare with…"));
  auto* kernels = new QSplitter(Qt::Vertical, this);
  kernels->addWidget(tableOf(classes_, kernels));
  kernels->addWidget(tableOf(kernels_, kernels));
  auto* timelines = new QSplitter(Qt::Vertical, this);
  timelines->addWidget(before_timeline_);
  timelines->addWidget(after_timeline_);
  tabs_->addTab(kernels, tr("By class and kernel"));
  tabs_->addTab(tableOf(iterations_, tabs_), tr("By iteration"));
  tabs_->addTab(tableOf(ranks_, tabs_), tr("By rank"));
  tabs_->addTab(timelines, tr("Timelines (before above, after below)"));
  tabs_->setTabVisible(kRanksTab, false);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(summary_);
  layout->addWidget(tabs_, 1);
}

QString DiffView::summaryText() const { return summary_->text(); }

void DiffView::setDiff(std::shared_ptr<const DiffSnapshot> diff) {
  diff_ = std::move(diff);
  const analysis::TraceDiff& d = diff_->diff;
  QString html = "<b>" + qs(diff_->before->path).toHtmlEscaped() + "</b> → <b>" +
                 qs(diff_->after->path).toHtmlEscaped() + "</b><table cellspacing=4>";
  if (d.per_iteration) html += line("Step (start to start)", d.iteration_ns, false);
  if (!d.ranks.empty()) html += line("Job step (slowest rank)", d.job_step_ns, false);
  html += line("Peak device memory", d.peak_memory_bytes, true);
  html += line("GPU busy", d.gpu_busy_ns, false);
  html += QString("<tr><td>Kernels</td><td align=right>%1</td><td>→</td><td align=right>%2</td><td>%3</td></tr>")
              .arg(d.kernel_count.before, 0, 'f', 0)
              .arg(d.kernel_count.after, 0, 'f', 0)
              .arg(qs(analysis::percentText(d.kernel_count)));
  auto kernels = [](size_t n) { return QString::number(n) + (n == 1 ? " kernel" : " kernels"); };
  html += QString("</table>Kernel times %1; %2 appeared, %3 disappeared.")
              .arg(d.per_iteration ? "per steady iteration" : "for the whole runs (no iterations in both)")
              .arg(kernels(d.appeared.size()))
              .arg(kernels(d.disappeared.size()));
  summary_->setText(html);
  classes_->setRows(d.classes);
  kernels_->setRows(d.kernels);
  iterations_->setRuns(diff_->before->iterations, diff_->after->iterations);
  ranks_->setRows(d.ranks);
  tabs_->setTabVisible(kRanksTab, !d.ranks.empty());
  alignTimelines();
}

// Both timelines from their first steady iteration, over the longer of the two: one time scale.
void DiffView::alignTimelines() {
  before_timeline_->setSnapshot(diff_->before);
  after_timeline_->setSnapshot(diff_->after);
  const auto [before_start, before_length] = firstSteady(*diff_->before);
  const auto [after_start, after_length] = firstSteady(*diff_->after);
  const int64_t window = std::max<int64_t>(1, std::max(before_length, after_length));
  before_timeline_->axis().show(before_start, before_start + window);
  after_timeline_->axis().show(after_start, after_start + window);
}

}  // namespace gpuscope::gui
