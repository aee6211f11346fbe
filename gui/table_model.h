// What the GUI's table models share: fixed columns with their headers, and rows without children.
#pragma once

#include <QAbstractTableModel>
#include <QStringList>

namespace gpuscope::gui {

class TableModel : public QAbstractTableModel {
 public:
  TableModel(QStringList headers, QObject* parent) : QAbstractTableModel(parent), headers_(std::move(headers)) {}

  int columnCount(const QModelIndex& parent = {}) const override {
    return parent.isValid() ? 0 : static_cast<int>(headers_.size());
  }
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= headers_.size()) {
      return {};
    }
    return headers_[section];
  }

 private:
  QStringList headers_;
};

}  // namespace gpuscope::gui
