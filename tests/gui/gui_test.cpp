// gpuscope-gui's models under QAbstractItemModelTester, its views and window driven off-screen
// (QT_QPA_PLATFORM=offscreen) on the fixture traces recorded on an H100, and its screenshots checked.
#include <QAbstractItemModelTester>
#include <QImage>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QtTest>
#include <set>

#include "gui/advisor_view.h"
#include "gui/findings_model.h"
#include "gui/kernel_table_model.h"
#include "gui/kernels_view.h"
#include "gui/main_window.h"
#include "gui/screenshot.h"

namespace gpuscope::gui {

namespace {

QString fixture(const char* name) { return QString(GPUSCOPE_SOURCE_DIR) + "/tests/fixtures/" + name; }

std::shared_ptr<const TraceSnapshot> snapshotOf(const char* name) {
  Result<std::shared_ptr<const TraceSnapshot>> s = analyseTrace(fixture(name).toStdString());
  if (!s) qFatal("%s", s.status().message().c_str());
  return *s;
}

}  // namespace

class GuiTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }  // recent files go to a test folder

  void kernelTableHoldsTheStatsRowsWithUnits() {
    const auto snapshot = snapshotOf("pytorch_gpt2_step.gpuscope");
    KernelTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setSnapshot(snapshot);
    QCOMPARE(model.rowCount(), static_cast<int>(snapshot->stats.kernels.size()));
    const QString total = model.index(0, KernelTableModel::kTotal).data().toString();
    QVERIFY2(total.endsWith(" ms") || total.endsWith(" us") || total.endsWith(" s"), qPrintable(total));
    QVERIFY(model.index(0, KernelTableModel::kShare).data().toString().endsWith(" %"));
    model.setGrouping(KernelTableModel::Grouping::kByClass);
    QCOMPARE(model.rowCount(), static_cast<int>(snapshot->stats.kernel_classes.size()));
  }

  void kernelsViewSortsByValueAndFilters() {
    const auto snapshot = snapshotOf("pytorch_gpt2_step.gpuscope");
    KernelsView view;
    view.setSnapshot(snapshot);
    QSortFilterProxyModel* proxy = view.proxy();
    // Sorted by total time, longest first, by value: the longest kernel of the stats comes first.
    QCOMPARE(proxy->index(0, KernelTableModel::kName).data().toString(),
             QString::fromStdString(snapshot->stats.kernels.front().name));
    view.table()->sortByColumn(KernelTableModel::kCount, Qt::DescendingOrder);
    for (int r = 1; r < proxy->rowCount(); ++r) {
      QVERIFY(proxy->index(r - 1, KernelTableModel::kCount).data(KernelTableModel::kSortRole).toLongLong() >=
              proxy->index(r, KernelTableModel::kCount).data(KernelTableModel::kSortRole).toLongLong());
    }
    const int all = proxy->rowCount();
    view.setFilter("NVJET");
    QVERIFY(proxy->rowCount() > 0 && proxy->rowCount() < all);
    for (int r = 0; r < proxy->rowCount(); ++r) {
      QVERIFY(proxy->index(r, KernelTableModel::kName).data().toString().contains("nvjet"));
    }
  }

  void findingsListTheAdviceAndShowTheSelectedOne() {
    const auto snapshot = snapshotOf("advisor_naive.gpuscope");
    FindingsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setSnapshot(snapshot);
    QCOMPARE(model.rowCount(), static_cast<int>(snapshot->advice.findings.size()));
    QVERIFY(model.rowCount() >= 5);
    AdvisorView view;
    view.setSnapshot(snapshot);
    view.selectFinding(2);
    const advisor::Finding& third = snapshot->advice.findings[2];
    QVERIFY(view.details()->toPlainText().contains(QString::fromStdString(third.title)));
    QVERIFY(view.details()->toPlainText().contains("Estimate:"));
  }

  void windowLoadsInTheBackgroundAndSaysWhatFailed() {
    MainWindow window;
    QSignalSpy shown(&window, &MainWindow::traceShown), failed(&window, &MainWindow::traceFailed);
    window.openTrace(fixture("pytorch_bridge_train.gpuscope"));
    QVERIFY(shown.wait(60'000));
    QVERIFY(window.windowTitle().startsWith("pytorch_bridge_train.gpuscope"));
    QVERIFY(window.kernelsView()->proxy()->rowCount() > 0);
    window.openTrace(fixture("README.md"));  // not a trace
    QVERIFY(failed.wait(60'000));
    QVERIFY(!failed.front().front().toString().isEmpty());
    window.openTrace(fixture("pytorch_memory_snapshot.pickle"));  // imported on the way in
    QVERIFY(shown.wait(60'000));
  }

  void screenshotsShowTheView() {
    QTemporaryDir dir;
    const QString png = dir.filePath("kernels.png");
    QVERIFY(renderScreenshot(fixture("pytorch_resnet_step.gpuscope"), "kernels", png));
    const QImage image(png);
    QCOMPARE(image.size(), QSize(kScreenshotWidth, kScreenshotHeight));
    std::set<QRgb> colours;
    for (int y = 0; y < image.height(); y += 7) {
      for (int x = 0; x < image.width(); x += 7) colours.insert(image.pixel(x, y));
    }
    QVERIFY2(colours.size() > 20, "the screenshot is nearly blank");
    const Status unknown = renderScreenshot(fixture("pytorch_resnet_step.gpuscope"), "flamegraph", png);
    QVERIFY(!unknown && unknown.kind() == ErrorKind::kUsage);
  }
};

}  // namespace gpuscope::gui

QTEST_MAIN(gpuscope::gui::GuiTest)
#include "gui_test.moc"
