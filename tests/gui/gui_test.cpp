// gpuscope-gui's models under QAbstractItemModelTester, its views and window driven off-screen
// (QT_QPA_PLATFORM=offscreen) on the fixture traces recorded on an H100, and its screenshots checked.
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QComboBox>
#include <QImage>
#include <QMouseEvent>
#include <QProgressBar>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <set>

#include "formats/sqlite_db.h"
#include "gui/advisor_view.h"
#include "gui/diff_view.h"
#include "gui/findings_model.h"
#include "gui/kernel_table_model.h"
#include "gui/kernels_view.h"
#include "gui/main_window.h"
#include "gui/memory_view.h"
#include "gui/ranks_model.h"
#include "gui/screenshot.h"
#include "gui/text.h"
#include "gui/time_axis.h"
#include "gui/timeline_details.h"
#include "gui/timeline_lanes.h"
#include "gui/timeline_view.h"
#include "tests/support/trace_builder.h"

namespace gpuscope::gui {

namespace {

QString fixture(const char* name) { return QString(GPUSCOPE_SOURCE_DIR) + "/tests/fixtures/" + name; }

std::shared_ptr<const TraceSnapshot> snapshotOf(const char* name) {
  Result<std::shared_ptr<const TraceSnapshot>> s = analyseTrace(fixture(name).toStdString());
  if (!s) qFatal("%s", s.status().message().c_str());
  return *s;
}

void showIn(TimelineView& view, std::shared_ptr<const TraceSnapshot> snapshot) {
  view.resize(1200, 700);
  view.show();
  view.setSnapshot(std::move(snapshot));
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

  // The real 2-rank DDP job in the Kernels view: "By rank" is offered, each rank's kernels are its own rows
  // (their counts add up to the trace's), and a row's first run is on that rank's GPU; a single process has no
  // such grouping.
  void kernelsViewGroupsAJobsKernelsByRank() {
    Result<std::shared_ptr<const TraceSnapshot>> job = analyseTrace(GPUSCOPE_MULTIRANK_TRACE);
    QVERIFY(job);
    KernelsView view;
    view.setSnapshot(*job);
    QCOMPARE(view.grouping()->count(), 3);
    view.setGrouping(KernelTableModel::Grouping::kByRank);
    const KernelTableModel* model = view.model();
    QAbstractItemModelTester tester(const_cast<KernelTableModel*>(model),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    qlonglong counted = 0;
    int of_rank[2] = {0, 0};
    for (int r = 0; r < model->rowCount(); ++r) {
      const QString name = model->index(r, KernelTableModel::kName).data().toString();
      QVERIFY2(name.startsWith("rank 0 · ") || name.startsWith("rank 1 · "), qPrintable(name));
      ++of_rank[name.startsWith("rank 1") ? 1 : 0];
      counted += model->index(r, KernelTableModel::kCount).data(KernelTableModel::kSortRole).toLongLong();
    }
    QCOMPARE(counted, static_cast<qlonglong>((*job)->trace().kernels.size()));
    QVERIFY(of_rank[0] > 10 && of_rank[1] > 10);
    const analysis::TraceData& t = (*job)->trace();
    for (int r = 0; r < model->rowCount(); ++r) {
      const auto run = model->firstRun(r);
      QVERIFY(run);
      const QString name = model->index(r, KernelTableModel::kName).data().toString();
      bool found = false;  // a kernel of that rank starts there
      for (size_t k = 0; k < t.kernels.size() && !found; ++k) {
        found = t.kernels.start_ns[k] == run->first &&
                QString("rank %1 · ").arg(*t.sessions[t.kernels.session[k]].rank) + qs(t.kernelName(k)) == name;
      }
      QVERIFY2(found, qPrintable(name));
    }
    view.setSnapshot(snapshotOf("pytorch_gpt2_step.gpuscope"));
    QCOMPARE(view.grouping()->count(), 2);
    QCOMPARE(view.model()->grouping(), KernelTableModel::Grouping::kByName);
  }

  // A recorded run that failed (`record` keeps its exit status): the view says so before the step, and predicts
  // nothing from it.
  void advisorViewSaysARunFailedFirst() {
    QTemporaryDir dir;
    const QString path = dir.filePath("failed.gpuscope");
    QVERIFY(QFile::copy(fixture("advisor_naive.gpuscope"), path));
    QFile(path).setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    {
      Result<sqlite::Database> db = sqlite::Database::open(path.toStdString(), sqlite::Database::Mode::kCreate);
      QVERIFY(db);
      QVERIFY(
          db->exec("INSERT INTO data_quality (session_id, severity, code, count, message) VALUES "
                   "(NULL, 2, 'program_failed', 139, 'the program was ended by signal 11 (SIGSEGV)')"));
    }
    Result<std::shared_ptr<const TraceSnapshot>> failed = analyseTrace(path.toStdString());
    QVERIFY(failed);
    AdvisorView view;
    view.setSnapshot(*failed);
    const QString header = view.headerText();
    QVERIFY2(header.startsWith("FAILED RUN: the program was ended by signal 11 (SIGSEGV)"), qPrintable(header));
    QVERIFY2(!header.contains("Predicted"), qPrintable(header));
    view.setSnapshot(snapshotOf("advisor_naive.gpuscope"));
    QVERIFY(view.headerText().contains("Predicted with every fix"));
    QVERIFY(!view.headerText().contains("FAILED"));
  }

  // The real 2-rank DDP job: the Advisor view shows the job's line and one row per rank, the slowest and the
  // rank the others wait for marked; a single process shows no ranks.
  void advisorViewShowsTheRanksOfAJob() {
    Result<std::shared_ptr<const TraceSnapshot>> job = analyseTrace(GPUSCOPE_MULTIRANK_TRACE);
    QVERIFY(job);
    RanksModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    AdvisorView view;
    view.resize(1200, 700);
    view.show();
    view.setSnapshot(*job);
    QVERIFY(view.ranks()->isVisible());
    QAbstractItemModel* ranks = view.ranks()->model();
    QCOMPARE(ranks->rowCount(), 2);
    QCOMPARE(ranks->columnCount(), static_cast<int>(RanksModel::kColumnCount));
    QCOMPARE(ranks->headerData(RanksModel::kHost, Qt::Horizontal, Qt::DisplayRole).toString(), QString("Host work"));
    const QString rank1 = ranks->index(1, RanksModel::kRank).data().toString();
    QVERIFY2(rank1.contains("slowest") && rank1.contains("others wait for it"), qPrintable(rank1));
    QVERIFY(ranks->index(0, RanksModel::kStep).data().toString().endsWith(" ms"));
    QVERIFY(ranks->index(1, RanksModel::kHost).data().toString().endsWith(" ms"));
    QCOMPARE(ranks->headerData(RanksModel::kOwnCode, Qt::Horizontal, Qt::DisplayRole).toString(), QString("Own code"));
    QCOMPARE(ranks->index(1, RanksModel::kOwnCode).data().toString(), QString("2.183 ms"));  // rank 1's, the late one
    QVERIFY(ranks->index(1, RanksModel::kRank).data(Qt::FontRole).value<QFont>().bold());
    QVERIFY(!ranks->index(0, RanksModel::kRank).data(Qt::FontRole).isValid());
    model.setSnapshot(*job);
    QCOMPARE(model.rowCount(), 2);
    view.setSnapshot(snapshotOf("advisor_naive.gpuscope"));
    QVERIFY(!view.ranks()->isVisible());
    QCOMPARE(view.ranks()->model()->rowCount(), 0);
  }

  void windowLoadsInTheBackgroundAndSaysWhatFailed() {
    MainWindow window;
    QSignalSpy shown(&window, &MainWindow::traceShown), failed(&window, &MainWindow::traceFailed);
    QSignalSpy loaded(&window, &MainWindow::traceLoaded);
    window.openTrace(fixture("pytorch_bridge_train.gpuscope"));
    auto* progress = window.findChild<QProgressBar*>();
    QVERIFY(progress && !progress->isHidden());  // busy from the open on
    // The timeline first, with the trace's lanes; the views that need the analyses wait for them.
    QVERIFY(loaded.wait(60'000));
    QVERIFY(!window.timelineView()->tracks().empty());
    auto* tabs = window.findChild<QTabWidget*>();
    QVERIFY(tabs);
    if (shown.isEmpty()) QVERIFY(!tabs->isTabEnabled(0));  // the advisor
    QVERIFY(!shown.isEmpty() || shown.wait(60'000));
    QVERIFY(tabs->isTabEnabled(0));
    QVERIFY(progress->isHidden());
    QVERIFY(window.windowTitle().startsWith("pytorch_bridge_train.gpuscope"));
    QVERIFY(window.kernelsView()->proxy()->rowCount() > 0);
    window.openTrace(fixture("README.md"));  // not a trace
    QVERIFY(failed.wait(60'000));
    QVERIFY(!failed.front().front().toString().isEmpty());
    window.openTrace(fixture("pytorch_memory_snapshot.pickle"));  // imported on the way in
    QVERIFY(shown.wait(60'000));
  }

  // Zooming keeps the time under the anchor in place; nothing leaves the trace.
  void stepLabelsSayWhichStepsTheBridgeAnnotated() {
    analysis::Iterations it;
    it.list.resize(4);
    it.list[0].warmup = true;
    QCOMPARE(stepText(it, 0), QString("step 0 · warm-up"));
    QCOMPARE(stepText(it, 1), QString("step 1"));  // no switch recorded: plain labels
    it.hooks_removed_ns = 100;
    it.list[3].hook_free = true;
    QCOMPARE(stepText(it, 2), QString("step 2 · module ranges"));
    QCOMPARE(stepText(it, 3), QString("step 3 · hook-free"));
  }

  // A recording the PyTorch bridge paused for four steps (testing::buildPausedRecording): their labels say so, and
  // the timeline shades where they ran, their kernels missing, so that the gap does not read as the GPU idle.
  void pausedStepsAreMarkedOnTheTimeline() {
    QTemporaryDir dir;
    Result<std::shared_ptr<const TraceSnapshot>> s =
        analyseTrace(testing::buildPausedRecording(dir.path().toStdString(), {}));
    QVERIFY(s);
    const analysis::Iterations& it = (*s)->iterations;
    QVERIFY(it.paused.end > it.paused.start);
    QCOMPARE(stepText(it, 7), QString("step 7 · recording paused"));
    QCOMPARE(stepText(it, 12), QString("step 12 · hook-free"));
    TimelineView view;
    showIn(view, *s);
    const QImage image = view.viewport()->grab().toImage();
    const int y = image.height() - 2;  // below the tracks
    const auto at = [&](int64_t t) { return image.pixelColor(TimelineView::kTitleWidth + view.axis().xOf(t), y); };
    QCOMPARE(at(it.paused.start + it.paused.length() / 8), TimelineView::kPausedShade);        // between step lines
    QVERIFY(at((it.list[3].start_ns + it.list[3].end_ns) / 2) != TimelineView::kPausedShade);  // recorded
    TimelineView plain;  // a recording never paused: no shade anywhere
    showIn(plain, snapshotOf("pytorch_resnet_step.gpuscope"));
    const QImage whole = plain.viewport()->grab().toImage();
    for (int x = 0; x < whole.width(); ++x)
      QVERIFY(whole.pixelColor(x, whole.height() - 2) != TimelineView::kPausedShade);
  }

  void timeAxisZoomsAroundTheAnchor_data() {
    QTest::addColumn<double>("factor");
    QTest::addColumn<double>("anchor");
    QTest::newRow("in at the left") << 4.0 << 0.0;
    QTest::newRow("in at the middle") << 2.0 << 500.0;
    QTest::newRow("in at the right") << 10.0 << 999.0;
    QTest::newRow("out at the middle, from a zoomed view") << 0.5 << 500.0;
  }
  void timeAxisZoomsAroundTheAnchor() {
    QFETCH(double, factor);
    QFETCH(double, anchor);
    TimeAxis axis;
    axis.setWidth(1000);
    axis.setTrace(1'000'000, 2'000'000);  // 1 ms over 1,000 px: 1,000 ns per pixel
    QCOMPARE(axis.nsPerPixel(), 1000.0);
    axis.zoom(8, 500);  // start from a zoomed-in view, so zooming out has room
    const int64_t before = axis.timeAt(anchor);
    axis.zoom(factor, anchor);
    QVERIFY(std::abs(axis.timeAt(anchor) - before) <= static_cast<int64_t>(axis.nsPerPixel()) + 1);
    QVERIFY(axis.viewStart() >= 1'000'000 && axis.viewEnd() <= 2'000'000 + 1);
  }

  void timeAxisStaysInsideTheTrace() {
    TimeAxis axis;
    axis.setWidth(1000);
    axis.setTrace(0, 1'000'000);
    axis.zoom(0.1, 500);  // out beyond the whole trace: the whole trace
    QCOMPARE(axis.viewStart(), int64_t{0});
    QCOMPARE(axis.viewEnd(), int64_t{1'000'000});
    axis.zoom(1e12, 10);  // in beyond a hundred pixels per nanosecond
    QCOMPARE(axis.nsPerPixel(), TimeAxis::kMinNsPerPixel);
    axis.pan(-1e9);
    QCOMPARE(axis.viewStart(), int64_t{0});
    axis.pan(1e15);
    QVERIFY(axis.viewEnd() <= 1'000'000 + 1);
    QCOMPARE(axis.xOf(axis.viewStart()), 0.0);
  }

  // A million 10 ns items over 1,000 pixels fold to one box per pixel column, every item in one; zoomed in,
  // each box is one item at its place.
  void lanesFoldWhatIsNarrowerThanAPixel() {
    Lane lane;
    for (int64_t i = 0; i < 1'000'000; ++i) {
      lane.start.push_back(i * 20);
      lane.end.push_back(i * 20 + 10);
      lane.label.push_back(0);
      lane.item.push_back(static_cast<uint32_t>(i));
      lane.kind.push_back(ItemKind::kKernel);
    }
    TimeAxis axis;
    axis.setWidth(1000);
    axis.setTrace(0, 20'000'000);
    const std::vector<LaneBox> all = visibleBoxes(lane, axis);
    QVERIFY(all.size() <= 1001);
    size_t covered = 0;
    for (const LaneBox& b : all) covered += b.count;
    QCOMPARE(covered, lane.size());
    axis.show(2'000'000, 2'000'200);  // 200 ns over 1,000 px: 5 px per ns
    const std::vector<LaneBox> near = visibleBoxes(lane, axis);
    QCOMPARE(near.size(), size_t{10});
    QCOMPARE(near.front().count, size_t{1});
    QCOMPARE(lane.start[near.front().first], int64_t{2'000'000});
    QCOMPARE(near.front().x1 - near.front().x0, 50.0);
  }

  // The largest value in effect in a window, with whole blocks taken from their maxima.
  void countersKeepEveryPeak_data() {
    QTest::addColumn<qint64>("t0");
    QTest::addColumn<qint64>("t1");
    QTest::addColumn<qint64>("expected");
    QTest::newRow("before the first change") << qint64(-10) << qint64(0) << qint64(0);
    QTest::newRow("in effect at the start") << qint64(15) << qint64(16) << qint64(1);
    QTest::newRow("one spike inside") << qint64(500) << qint64(700) << qint64(1'000'000);
    QTest::newRow("the whole counter") << qint64(0) << qint64(10'000) << qint64(1'000'000);
    QTest::newRow("after the spike") << qint64(602) << qint64(9'000) << qint64(1);
  }
  void countersKeepEveryPeak() {
    QFETCH(qint64, t0);
    QFETCH(qint64, t1);
    QFETCH(qint64, expected);
    std::vector<analysis::MemoryPoint> points;
    for (int64_t t = 0; t < 2'000; t += 2) points.push_back({t, t == 600 ? 1'000'000 : 1});
    const Counter c = buildCounter("memory", points);
    QCOMPARE(c.peak, int64_t{1'000'000});
    QCOMPARE(maxIn(c, t0, t1), expected);
  }

  void findingsAndKernelsShowOnTheTimeline() {
    MainWindow window;
    window.resize(1200, 800);
    window.showSnapshot(snapshotOf("advisor_naive.gpuscope"));
    QTableView* findings = window.advisorView()->table();
    emit findings->activated(findings->model()->index(0, 0));
    QVERIFY(window.timelineView()->highlight().has_value());
    QCOMPARE(window.findChild<QTabWidget*>()->currentWidget(), window.timelineView()->parentWidget());
    const auto [start, end] = *window.timelineView()->highlight();
    QVERIFY(window.timelineView()->axis().viewStart() <= start && window.timelineView()->axis().viewEnd() >= end);
    QTableView* kernels = window.kernelsView()->table();
    emit kernels->activated(kernels->model()->index(0, 0));
    const auto kernel = *window.timelineView()->highlight();
    QVERIFY(kernel.first != start || kernel.second != end);
    QVERIFY(kernel.second > kernel.first);
  }

  // The real 2-rank DDP job: each rank's threads and streams are named by their rank.
  void timelineNamesTheRanksOfAJob() {
    Result<std::shared_ptr<const TraceSnapshot>> snapshot = analyseTrace(GPUSCOPE_MULTIRANK_TRACE);
    QVERIFY(snapshot);
    TimelineView view;
    showIn(view, *snapshot);
    QStringList titles;
    for (const Track& t : view.tracks()) titles << t.title;
    QVERIFY2(titles.contains("rank 1 · pid 651 · thread 651"), qPrintable(titles.join("; ")));
    QVERIFY2(titles.filter(QRegularExpression("^stream 7 · GPU 1 .* of pid 651 \\(rank 1\\)$")).size() == 1,
             qPrintable(titles.join("; ")));
  }

  void timelineHasTracksAndSelectsWhatIsClicked() {
    const auto snapshot = snapshotOf("nvtx_training.gpuscope");
    TimelineView view;
    showIn(view, snapshot);
    bool gpu = false, cpu = false;
    for (const Track& t : view.tracks()) (t.gpu ? gpu : cpu) = true;
    QVERIFY(gpu && cpu);
    QCOMPARE(view.counters().size(), size_t{1});  // the GPU's live memory
    QCOMPARE(view.counters().front().peak, snapshot->memory.peakDevice()->peak_bytes);
    size_t items = 0;
    for (const Track& t : view.tracks()) {
      for (const Lane& l : t.lanes) items += l.size();
    }
    QCOMPARE(items, snapshot->trace().kernels.size() + snapshot->trace().copies.size() +
                        snapshot->trace().memsets.size() + snapshot->trace().api_calls.size() +
                        static_cast<size_t>(std::count(snapshot->trace().nvtx.kind.begin(),
                                                       snapshot->trace().nvtx.kind.end(), schema::NvtxKind::kRange)));
    const TimeAxis before = view.axis();
    QTest::keyClick(&view, Qt::Key_W);
    QVERIFY(view.axis().nsPerPixel() < before.nsPerPixel());
    QTest::keyClick(&view, Qt::Key_D);
    QVERIFY(view.axis().viewStart() > before.viewStart());
    view.axis().showAll();
    // Click every pixel of the first GPU track's first lane until something is hit.
    int top = TimelineView::kRulerHeight;
    for (const Track& t : view.tracks()) {
      if (t.gpu) break;
      top += static_cast<int>(t.lanes.size()) * TimelineView::kLaneHeight + TimelineView::kTrackGap;
    }
    QSignalSpy selected(&view, &TimelineView::selected);
    for (int x = TimelineView::kTitleWidth; x < view.viewport()->width() && selected.isEmpty(); x += 3) {
      QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, QPoint(x, top + 5));
    }
    QVERIFY(!selected.isEmpty());
    QVERIFY2(selected.front().front().toString().contains("lasts"), qPrintable(selected.front().front().toString()));
  }

  // At the peak the stacked categories add up to the peak, and the allocations listed alive then are it.
  void memoryViewShowsWhatIsAliveAtThePeak() {
    const auto snapshot = snapshotOf("nvtx_training.gpuscope");
    MemoryView view;
    view.resize(1200, 700);
    view.setSnapshot(snapshot);
    const int64_t peak = snapshot->memory.peakDevice()->peak_bytes;
    QCOMPARE(view.series().peak_total, peak);
    int64_t stacked = 0;
    for (int64_t b : view.series().at(view.series().peak_time)) stacked += b;
    QCOMPARE(stacked, peak);
    AllocationsModel* model = view.allocations();
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(model->rowCount() > 0);
    int64_t listed = 0;
    const int32_t device = snapshot->memory.peakDevice()->device;
    for (int32_t i : analysis::aliveAt(snapshot->memory, device, model->time())) {
      listed += snapshot->memory.allocations[static_cast<size_t>(i)].bytes;
    }
    QCOMPARE(listed, peak);
    QVERIFY(model->index(0, AllocationsModel::kSize).data().toString().contains("B"));
    QVERIFY(!model->index(0, AllocationsModel::kCreator).data().toString().isEmpty());
    view.choose(snapshot->trace().startNs());  // before anything was allocated
    QCOMPARE(model->rowCount(), 0);
    // samples/memory_pool fragments its pool: 128 MiB reserved while 64 MiB were in use.
    MemoryView pooled;
    pooled.setSnapshot(snapshotOf("memory_pool.gpuscope"));
    QVERIFY2(pooled.summaryText().contains("64.0 MiB reserved but not handed out (fragmentation)"),
             qPrintable(pooled.summaryText()));
  }

  // A Flax evaluation recorded with `record --jax` (bench/corpus/jax_kept_logits, H200): CUDA saw XLA's 104.9 GiB
  // reservation only; the view says what XLA had in use inside it, and how fast that grew.
  void memoryViewShowsWhatXlaHadInUse() {
    Result<std::shared_ptr<const TraceSnapshot>> s =
        analyseTrace(std::string(GPUSCOPE_CORPUS_TRACES) + "/jax_kept_logits.program.gpuscope");
    QVERIFY2(s, s ? "" : s.status().message().c_str());
    MemoryView view;
    view.resize(1200, 700);
    view.setSnapshot(*s);
    QVERIFY2(view.summaryText().contains("XLA in use: 5.9 GiB at its peak (143 readings"),
             qPrintable(view.summaryText()));
    QVERIFY2(view.summaryText().contains("Growing: 1.9 MiB per step"), qPrintable(view.summaryText()));
  }

  // The real 2-rank DDP job: each rank's GPU can be chosen; the chosen one's series, summary and allocations are
  // its own (each rank holds its own copy of the model, 5.6 GiB at its peak). One GPU: no choice shown.
  void memoryViewShowsTheRankChosen() {
    Result<std::shared_ptr<const TraceSnapshot>> job = analyseTrace(GPUSCOPE_MULTIRANK_TRACE);
    QVERIFY(job);
    MemoryView view;
    view.resize(1200, 700);
    view.show();
    view.setSnapshot(*job);
    QVERIFY(view.devices()->isVisible());
    QCOMPARE(view.devices()->count(), 2);
    const int32_t first = view.device();
    const int other_index = view.devices()->currentIndex() == 0 ? 1 : 0;
    const int32_t other = view.devices()->itemData(other_index).toInt();
    QVERIFY(other != first);
    view.showDevice(other);
    QCOMPARE(view.devices()->currentIndex(), other_index);
    const QString label = qs((*job)->trace().deviceLabel(other));
    QVERIFY2(view.summaryText().contains(" on " + label), qPrintable(view.summaryText()));
    const analysis::MemoryAnalysis& memory = (*job)->memory;
    const int64_t peak = memory.devices[static_cast<size_t>(other)].peak_bytes;  // by device ordinal
    QCOMPARE(view.series().peak_total, peak);
    AllocationsModel* model = view.allocations();
    QVERIFY(model->rowCount() > 0);
    for (int32_t i : analysis::aliveAt(memory, other, view.series().peak_time))
      QCOMPARE(memory.allocations[i].device, other);
    int64_t listed = 0;
    for (int32_t i : analysis::aliveAt(memory, other, view.series().peak_time)) listed += memory.allocations[i].bytes;
    QCOMPARE(listed, peak);
    view.setSnapshot(snapshotOf("nvtx_training.gpuscope"));
    QVERIFY(!view.devices()->isVisible());
  }

  // Two runs of samples/runtime_mlp, before and after the plan (fused GEMM epilogue): the diff of the CLI.
  void diffComparesTwoRuns() {
    const auto before = snapshotOf("runtime_mlp_before.gpuscope");
    Result<std::shared_ptr<const DiffSnapshot>> d =
        compareTraces(before, fixture("runtime_mlp_after.gpuscope").toStdString());
    QVERIFY(d);
    const analysis::TraceDiff expected = analysis::diffTraces(before->trace(), (*d)->after->trace());
    DiffView view;
    QAbstractItemModelTester tester(view.kernels(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    view.setDiff(*d);
    QCOMPARE(view.classes()->rowCount(), static_cast<int>(expected.classes.size()));
    QCOMPARE(view.kernels()->rowCount(), static_cast<int>(expected.kernels.size()));
    QCOMPARE(view.kernels()->index(0, ChangesModel::kName).data().toString(),
             QString::fromStdString(expected.kernels.front().name));
    QVERIFY(view.summaryText().contains("Peak device memory"));
    // Iteration by iteration, and the two timelines on one time scale from their first steady iteration.
    QAbstractItemModelTester iterations(view.iterations(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    const auto& after = (*d)->after;
    QCOMPARE(view.iterations()->rowCount(),
             static_cast<int>(std::max(before->iterations.list.size(), after->iterations.list.size())));
    QVERIFY(view.iterations()->rowCount() > 1);
    QCOMPARE(view.iterations()->index(1, IterationsModel::kAfter).data().toString(),
             durationText(after->iterations.list[1].durationNs()));
    QVERIFY(!view.beforeTimeline()->tracks().empty() && !view.afterTimeline()->tracks().empty());
    const TimeAxis& b = view.beforeTimeline()->axis();
    const TimeAxis& a = view.afterTimeline()->axis();
    QVERIFY(std::abs(static_cast<double>((b.viewEnd() - b.viewStart()) - (a.viewEnd() - a.viewStart()))) <=
            2 * std::max(a.nsPerPixel(), b.nsPerPixel()));
    QVERIFY(!compareTraces(before, "/no/such/trace.gpuscope"));
    QCOMPARE(view.ranks()->rowCount(), 0);  // one process each: no ranks to compare

    MainWindow window;
    QSignalSpy diffs(&window, &MainWindow::diffShown);
    window.showSnapshot(before);
    window.compareWith(fixture("runtime_mlp_after.gpuscope"));
    QVERIFY(diffs.wait(60'000));
    QCOMPARE(window.findChild<QTabWidget*>()->currentWidget(), window.diffView());
  }

  // The real 2-rank DDP job against itself: the job's step in the summary, each rank in the "By rank" tab.
  void diffComparesAJobRankByRank() {
    Result<std::shared_ptr<const TraceSnapshot>> job = analyseTrace(GPUSCOPE_MULTIRANK_TRACE);
    QVERIFY(job);
    Result<std::shared_ptr<const DiffSnapshot>> d = compareTraces(*job, GPUSCOPE_MULTIRANK_TRACE);
    QVERIFY(d);
    DiffView view;
    QAbstractItemModelTester tester(view.ranks(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    view.setDiff(*d);
    QVERIFY(view.summaryText().contains("Job step (slowest rank)"));
    QCOMPARE(view.ranks()->rowCount(), 2);
    QCOMPARE(view.ranks()->index(1, RankChangesModel::kRank).data().toString(), QString("1"));
    QCOMPARE(view.ranks()->index(1, RankChangesModel::kStepBefore).data().toString(),
             view.ranks()->index(1, RankChangesModel::kStepAfter).data().toString());
    QVERIFY(view.ranks()->index(0, RankChangesModel::kHostAfter).data().toString().endsWith(" ms"));
  }

  // A kernel's details carry its launch configuration and the call that launched it, to which an arrow
  // points; the search finds by name in time order; shift-drag measures a range.
  void timelineSaysWhatAnItemIsFindsAndMeasures() {
    const auto snapshot = snapshotOf("nvtx_training.gpuscope");
    TimelineView view;
    showIn(view, snapshot);
    QSignalSpy said(&view, &TimelineView::selected);
    const QString kernel = QString::fromStdString(snapshot->trace().kernelName(0)).left(12);
    QVERIFY(view.findNext(kernel));
    const auto first = *view.selection();
    const QString text = said.back().front().toString();
    QVERIFY2(text.startsWith("kernel: ") && text.contains("grid ") && text.contains("launched by "), qPrintable(text));
    QVERIFY(view.launchOf(first).has_value());
    const Lane& lane = view.tracks()[first.track].lanes[first.lane];
    QVERIFY(view.findNext(kernel));
    const auto second = *view.selection();
    QVERIFY(view.tracks()[second.track].lanes[second.lane].start[second.index] > lane.start[first.index]);
    QVERIFY(!view.findNext("no kernel is named like this"));
    view.axis().showAll();
    const int y = TimelineView::kRulerHeight + 200;
    QTest::mousePress(view.viewport(), Qt::LeftButton, Qt::ShiftModifier, QPoint(400, y));
    QTest::mouseMove(view.viewport(), QPoint(600, y));
    QMouseEvent move(QEvent::MouseMove, QPointF(600, y), QPointF(600, y), Qt::LeftButton, Qt::LeftButton,
                     Qt::ShiftModifier);
    QApplication::sendEvent(view.viewport(), &move);
    QTest::mouseRelease(view.viewport(), Qt::LeftButton, Qt::ShiftModifier, QPoint(600, y));
    QVERIFY(view.measured().has_value());
    QVERIFY(view.measured()->second > view.measured()->first);
    QVERIFY(said.back().front().toString().startsWith("Range: "));
  }

  // An NCCL kernel's details say what NCCL said it carried and the bus bandwidth it reached (the recorded
  // sweep of tests/fixtures/multirank: a 256 MiB all-reduce on 2 ranks of NVLink).
  void timelineSaysWhatAnNcclKernelCarried() {
    Result<std::shared_ptr<const TraceSnapshot>> snapshot =
        analyseTrace(std::string(GPUSCOPE_NCCL_SWEEP) + "/sweep-on.gpuscope");
    QVERIFY(snapshot);
    const auto& ops = (*snapshot)->collectives;
    QVERIFY(!ops.empty());
    const auto big = std::find_if(ops.begin(), ops.end(), [](const analysis::CollectiveOp& op) {
      return op.operation == "AllReduce" && op.bytes == 256 << 20;
    });
    QVERIFY(big != ops.end());
    const QString text = describeItem((*snapshot)->trace(), ItemKind::kKernel, static_cast<uint32_t>(big->kernel), ops);
    QVERIFY2(text.contains("NCCL AllReduce of 256.0 MiB on 2 ranks, RING/SIMPLE on 24 channels, bus bandwidth "),
             qPrintable(text));
    QVERIFY2(text.contains("GB/s over "), qPrintable(text));
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
    QVERIFY(renderScreenshot(fixture("pytorch_resnet_step.gpuscope"), "timeline", dir.filePath("timeline.png")));
    QVERIFY(renderScreenshot(fixture("pytorch_bridge_train.gpuscope"), "memory", dir.filePath("memory.png")));
    QVERIFY(renderScreenshot(fixture("runtime_mlp_before.gpuscope"), "diff", dir.filePath("diff.png"),
                             fixture("runtime_mlp_after.gpuscope")));
    const Status unknown = renderScreenshot(fixture("pytorch_resnet_step.gpuscope"), "flamegraph", png);
    QVERIFY(!unknown && unknown.kind() == ErrorKind::kUsage);
  }
};

}  // namespace gpuscope::gui

QTEST_MAIN(gpuscope::gui::GuiTest)
#include "gui_test.moc"
