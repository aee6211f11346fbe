#include "gui/table_view.h"

#include <QHeaderView>
#include <QTableView>

namespace gpuscope::gui {

void setUpTable(QTableView* table, QAbstractItemModel* model, int stretch_column) {
  table->setModel(model);
  table->setWordWrap(false);
  table->verticalHeader()->hide();
  table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table->horizontalHeader()->setSectionResizeMode(stretch_column, QHeaderView::Stretch);
}

}  // namespace gpuscope::gui
