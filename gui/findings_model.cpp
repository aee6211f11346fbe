#include "gui/findings_model.h"
#include "gui/text.h"

#include <QBrush>
#include <QColor>

#include "advisor/report.h"

namespace gpuscope::gui {

namespace {

QColor severityColour(advisor::Severity s) {
  switch (s) {
    case advisor::Severity::kHigh: return QColor(0xc6, 0x28, 0x28);
    case advisor::Severity::kMedium: return QColor(0xe6, 0x8a, 0x00);
    case advisor::Severity::kLow: return QColor(0x1e, 0x6f, 0xb8);
    case advisor::Severity::kInfo: break;
  }
  return QColor(0x60, 0x60, 0x60);
}

}  // namespace

FindingsModel::FindingsModel(QObject* parent)
    : TableModel({tr("Severity"), tr("Finding"), tr("Estimated gain")}, parent) {}

void FindingsModel::setSnapshot(std::shared_ptr<const TraceSnapshot> snapshot) {
  beginResetModel();
  snapshot_ = std::move(snapshot);
  endResetModel();
}

const advisor::Finding* FindingsModel::finding(const QModelIndex& index) const {
  if (!snapshot_ || !index.isValid() || index.row() >= rowCount()) return nullptr;
  return &snapshot_->advice.findings[static_cast<size_t>(index.row())];
}

int FindingsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !snapshot_ ? 0 : static_cast<int>(snapshot_->advice.findings.size());
}

QVariant FindingsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const advisor::Finding& f = *finding(index);
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case kSeverity: return qs(std::string(toString(f.severity)));
      case kTitle: return qs(f.title);
      case kGain: return qs(advisor::gainText(f, snapshot_->advice.per_step));
      default: return {};
    }
  }
  if (role == Qt::ForegroundRole && index.column() == kSeverity) return QBrush(severityColour(f.severity));
  if (role == Qt::ToolTipRole) return qs(f.summary);
  return {};
}

QString findingHtml(const advisor::Finding& f, bool per_step) {
  auto esc = [](const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); };
  QString html = "<h3>" + esc(f.title) + "</h3><p>" + esc(f.summary) + "</p><p><b>Seen</b></p><ul>";
  for (const advisor::Evidence& e : f.evidence) html += "<li>" + esc(e.text) + "</li>";
  html += "</ul><p><b>Why</b> " + esc(f.why) + "</p>";
  html +=
      "<p><b>Gain</b> " + esc(advisor::gainText(f, per_step)) + "<br><i>Estimate: " + esc(f.gain.basis) + "</i></p>";
  html += "<p><b>Fix</b> " + esc(f.fix.summary) + "</p>";
  if (!f.fix.snippet.empty()) html += "<pre>" + esc(f.fix.snippet) + "</pre>";
  html += "<p><b>Check</b> " + esc(f.verify) + "</p>";
  return html;
}

}  // namespace gpuscope::gui
