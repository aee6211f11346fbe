#include "gui/diff_view.h"
#include "gui/text.h"

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include "analyzer/units.h"

namespace gpuscope::gui {

namespace {

QString line(const char* what, const analysis::Change& c, bool bytes) {
  auto text = [&](double v) {
    return bytes ? bytesText(static_cast<int64_t>(v)) : durationText(static_cast<int64_t>(v));
  };
  return QString("<tr><td>%1</td><td align=right>%2</td><td>→</td><td align=right>%3</td><td>%4</td></tr>")
      .arg(what, text(c.before), text(c.after), qs(analysis::percentText(c)));
}

QTableView* tableOf(ChangesModel* model, QWidget* parent) {
  auto* table = new QTableView(parent);
  table->setModel(model);
  table->setWordWrap(false);
  table->verticalHeader()->hide();
  table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table->horizontalHeader()->setSectionResizeMode(ChangesModel::kName, QHeaderView::Stretch);
  return table;
}

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
    case kChange: return (k.time_ns.delta() > 0 ? "+" : "") + durationText(static_cast<int64_t>(k.time_ns.delta()));
    case kPercent: return qs(analysis::percentText(k.time_ns));
    case kLaunchesBefore: return QString::number(k.count.before, 'f', 0);
    case kLaunchesAfter: return QString::number(k.count.after, 'f', 0);
    default: return {};
  }
}

DiffView::DiffView(QWidget* parent)
    : QWidget(parent), summary_(new QLabel(this)), classes_(new ChangesModel(this)), kernels_(new ChangesModel(this)) {
  summary_->setTextFormat(Qt::RichText);
  summary_->setText(tr("Compare this trace with another: File ▸ Compare with…"));
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(tableOf(classes_, split));
  split->addWidget(tableOf(kernels_, split));
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(summary_);
  layout->addWidget(split, 1);
}

QString DiffView::summaryText() const { return summary_->text(); }

void DiffView::setDiff(std::shared_ptr<const DiffSnapshot> diff) {
  diff_ = std::move(diff);
  const analysis::TraceDiff& d = diff_->diff;
  QString html = "<b>" + qs(diff_->before->path).toHtmlEscaped() + "</b> → <b>" +
                 qs(diff_->after->path).toHtmlEscaped() + "</b><table cellspacing=4>";
  if (d.per_iteration) html += line("Iteration (steady median)", d.iteration_ns, false);
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
}

}  // namespace gpuscope::gui
