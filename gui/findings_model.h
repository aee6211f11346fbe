// The advisor panel's list: one row per finding of `gpuscope advise`, most to gain first, with its severity,
// title and estimated gain; the details view renders the selected finding (evidence, why, fix, check).
#pragma once

#include <memory>

#include "gui/table_model.h"
#include "gui/trace_snapshot.h"

namespace gpuscope::gui {

class FindingsModel : public TableModel {
  Q_OBJECT

 public:
  enum Column { kSeverity, kTitle, kGain, kColumnCount };

  explicit FindingsModel(QObject* parent = nullptr);
  void setSnapshot(std::shared_ptr<const TraceSnapshot> snapshot);
  const advisor::Finding* finding(const QModelIndex& index) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;

 private:
  std::shared_ptr<const TraceSnapshot> snapshot_;
};

// The finding as HTML for a QTextBrowser: what was seen, why it costs, the gain and its basis, the fix with
// its snippet, how to check it.
QString findingHtml(const advisor::Finding& finding, bool per_step);

}  // namespace gpuscope::gui
