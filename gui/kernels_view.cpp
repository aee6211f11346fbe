#include "gui/kernels_view.h"
#include "gui/table_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

namespace gpuscope::gui {

KernelsView::KernelsView(QWidget* parent)
    : QWidget(parent),
      model_(new KernelTableModel(this)),
      proxy_(new QSortFilterProxyModel(this)),
      filter_(new QLineEdit(this)),
      grouping_(new QComboBox(this)),
      table_(new QTableView(this)) {
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(KernelTableModel::kSortRole);
  proxy_->setFilterKeyColumn(KernelTableModel::kName);
  proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
  filter_->setPlaceholderText(tr("Filter kernels by name"));
  filter_->setClearButtonEnabled(true);
  grouping_->addItems({tr("By name"), tr("By class")});
  setUpTable(table_, proxy_, KernelTableModel::kName);
  table_->setSortingEnabled(true);
  table_->sortByColumn(KernelTableModel::kTotal, Qt::DescendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);

  auto* bar = new QHBoxLayout;
  bar->addWidget(filter_, 1);
  bar->addWidget(grouping_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(table_, 1);

  connect(table_, &QAbstractItemView::activated, this, [this](const QModelIndex& index) {
    if (const auto run = model_->firstRun(proxy_->mapToSource(index).row())) {
      emit showOnTimeline(run->first, run->second);
    }
  });
  connect(filter_, &QLineEdit::textChanged, proxy_, &QSortFilterProxyModel::setFilterFixedString);
  connect(grouping_, &QComboBox::currentIndexChanged, this, [this](int i) {
    if (i >= 0) model_->setGrouping(static_cast<KernelTableModel::Grouping>(i));
  });
}

// "By rank" is offered for a job of several ranks only.
void KernelsView::setSnapshot(std::shared_ptr<const TraceSnapshot> snapshot) {
  model_->setSnapshot(std::move(snapshot));
  const bool ranks = model_->hasRanks();
  if (ranks && grouping_->count() == 2) grouping_->addItem(tr("By rank"));
  if (!ranks && grouping_->count() == 3) {
    if (grouping_->currentIndex() == 2) grouping_->setCurrentIndex(0);
    grouping_->removeItem(2);
  }
}

void KernelsView::setFilter(const QString& text) { filter_->setText(text); }

void KernelsView::setGrouping(KernelTableModel::Grouping grouping) {
  const int index = static_cast<int>(grouping);
  if (index < grouping_->count()) grouping_->setCurrentIndex(index);
}

}  // namespace gpuscope::gui
