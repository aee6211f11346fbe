// How the GUI's tables look: one line per row and no row numbers, every column as wide as its contents but
// one, which takes the width that is left.
#pragma once

class QAbstractItemModel;
class QTableView;

namespace gpuscope::gui {

void setUpTable(QTableView* table, QAbstractItemModel* model, int stretch_column);

}  // namespace gpuscope::gui
