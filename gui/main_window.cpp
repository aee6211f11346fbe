#include "gui/main_window.h"

#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "gui/advisor_view.h"
#include "gui/kernels_view.h"
#include "gui/memory_view.h"
#include "gui/timeline_view.h"

namespace gpuscope::gui {

namespace {

constexpr int kMaxRecent = 8;

}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      tabs_(new QTabWidget(this)),
      warnings_(new QLabel(this)),
      progress_(new QProgressBar(this)),
      kernels_(new KernelsView(this)),
      advisor_(new AdvisorView(this)),
      timeline_(new TimelineView(this)),
      memory_(new MemoryView(this)),
      diff_(new DiffView(this)) {
  setWindowTitle(tr("gpuscope"));
  setAcceptDrops(true);
  warnings_->setWordWrap(true);
  warnings_->setStyleSheet("QLabel { background: #fff4d6; color: #5a4300; padding: 6px; }");
  warnings_->hide();
  tabs_->addTab(advisor_, tr("Advisor"));
  tabs_->addTab(kernels_, tr("Kernels"));
  tabs_->addTab(timelinePage(), tr("Timeline"));
  tabs_->addTab(memory_, tr("Memory"));
  tabs_->addTab(diff_, tr("Diff"));
  connect(timeline_, &TimelineView::selected, this, [this](const QString& what) { statusBar()->showMessage(what); });
  connect(advisor_, &AdvisorView::showOnTimeline, this, &MainWindow::showOnTimeline);
  connect(kernels_, &KernelsView::showOnTimeline, this, &MainWindow::showOnTimeline);
  auto* central = new QWidget(this);
  auto* layout = new QVBoxLayout(central);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(warnings_);
  layout->addWidget(tabs_, 1);
  setCentralWidget(central);
  buildMenus();
  progress_->setRange(0, 0);  // busy: SQLite and the analyses do not say how far they are
  progress_->setMaximumWidth(160);
  progress_->hide();
  statusBar()->addPermanentWidget(progress_);
  statusBar()->showMessage(tr("Open a trace: File ▸ Open, or drop a file here"));
  connect(&loading_, &QFutureWatcher<LoadResult>::finished, this, &MainWindow::loadFinished);
  connect(&analysing_, &QFutureWatcher<std::shared_ptr<const TraceSnapshot>>::finished, this,
          &MainWindow::analysisFinished);
  connect(&comparing_, &QFutureWatcher<Result<std::shared_ptr<const DiffSnapshot>>>::finished, this,
          &MainWindow::compareFinished);
}

// The timeline with a search field above it: Enter finds the next item whose name holds the text.
QWidget* MainWindow::timelinePage() {
  auto* page = new QWidget(this);
  auto* find = new QLineEdit(page);
  find->setPlaceholderText(tr("Find on the timeline by name (Enter: next)  ·  W/S zoom, A/D pan, shift-drag measures"));
  find->setClearButtonEnabled(true);
  connect(find, &QLineEdit::returnPressed, this, [this, find] {
    if (!timeline_->findNext(find->text()))
      statusBar()->showMessage(tr("No more items named like '%1'").arg(find->text()));
  });
  auto* layout = new QVBoxLayout(page);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(find);
  layout->addWidget(timeline_, 1);
  return page;
}

QStringList MainWindow::viewNames() { return {"advisor", "kernels", "timeline", "memory", "diff"}; }

bool MainWindow::showView(const QString& name) {
  const auto at = viewNames().indexOf(name);
  if (at < 0) return false;
  tabs_->setCurrentIndex(static_cast<int>(at));
  return true;
}

void MainWindow::showOnTimeline(qint64 start_ns, qint64 end_ns) {
  timeline_->showRange(start_ns, end_ns);
  showView("timeline");
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open…"), QKeySequence::Open, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open a trace"), {},
                                                      tr("Traces (*.gpuscope *.json *.pickle *.pkl);;All files (*)"));
    if (!path.isEmpty()) openTrace(path);
  });
  file->addAction(tr("&Compare with…"), this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Compare with another trace"), {},
                                                      tr("Traces (*.gpuscope *.json *.pickle *.pkl);;All files (*)"));
    if (!path.isEmpty()) compareWith(path);
  });
  recent_ = file->addMenu(tr("Open &Recent"));
  fillRecentMenu();
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
}

void MainWindow::openTrace(const QString& path) {
  if (loading_.isRunning()) return;  // one load at a time; the next open waits for the user
  loading_path_ = path;
  statusBar()->showMessage(tr("Loading %1 (step 1 of 2)…").arg(path));
  progress_->show();
  loading_.setFuture(QtConcurrent::run([p = path.toStdString()] { return loadSnapshot(p); }));
}

void MainWindow::loadFinished() {
  LoadResult result = loading_.result();
  if (!result) {
    const QString message = QString::fromStdString(result.status().message());
    statusBar()->showMessage(tr("Could not open %1").arg(loading_path_));
    progress_->hide();
    emit traceFailed(message);
    if (isVisible()) QMessageBox::warning(this, tr("Could not open the trace"), message);
    return;
  }
  rememberRecent(loading_path_);
  std::shared_ptr<const TraceSnapshot> loaded = std::move(*result);
  showLoaded(loaded);
  // An analysis still running for an earlier trace finishes unseen: analysisFinished drops it.
  analysing_.setFuture(QtConcurrent::run([loaded] { return analyseSnapshot(*loaded); }));
}

// The timeline first: it needs only the trace and its lanes, which the load built; the views that read the
// analyses are greyed out until those arrive.
void MainWindow::showLoaded(std::shared_ptr<const TraceSnapshot> snapshot) {
  shown_ = snapshot;
  const QString path = QString::fromStdString(snapshot->path);
  setWindowTitle(tr("%1 — gpuscope").arg(QFileInfo(path).fileName()));
  showWarnings(snapshot->warnings);
  setAnalysedViewsEnabled(false);
  timeline_->setSnapshot(snapshot);
  statusBar()->showMessage(tr("%1: analysing (step 2 of 2)…").arg(path));
  emit traceLoaded(path);
}

void MainWindow::analysisFinished() {
  std::shared_ptr<const TraceSnapshot> analysed = analysing_.result();
  if (!shown_ || analysed->data != shown_->data) return;  // a trace opened since replaced it
  showSnapshot(std::move(analysed));
}

void MainWindow::setAnalysedViewsEnabled(bool enabled) {
  const int timeline = static_cast<int>(viewNames().indexOf("timeline"));
  for (const char* name : {"advisor", "kernels", "memory"}) {
    const int i = static_cast<int>(viewNames().indexOf(name));
    tabs_->setTabEnabled(i, enabled);
    tabs_->setTabToolTip(i, enabled ? QString() : tr("Analysing the trace…"));
  }
  if (!enabled && !tabs_->isTabEnabled(tabs_->currentIndex())) tabs_->setCurrentIndex(timeline);
}

void MainWindow::showWarnings(const std::vector<std::string>& warnings) {
  QStringList lines;
  for (const std::string& w : warnings) lines << QString::fromStdString(w);
  warnings_->setText(tr("Trace warnings: ") + lines.join("; "));
  warnings_->setVisible(!lines.isEmpty());
}

void MainWindow::compareWith(const QString& path) {
  if (!shown_ || comparing_.isRunning()) return;
  statusBar()->showMessage(tr("Comparing with %1…").arg(path));
  comparing_.setFuture(
      QtConcurrent::run([before = shown_, p = path.toStdString()] { return compareTraces(before, p); }));
}

void MainWindow::compareFinished() {
  Result<std::shared_ptr<const DiffSnapshot>> result = comparing_.result();
  if (!result) {
    const QString message = QString::fromStdString(result.status().message());
    emit traceFailed(message);
    if (isVisible()) QMessageBox::warning(this, tr("Could not compare"), message);
    return;
  }
  diff_->setDiff(std::move(*result));
  showView("diff");
  emit diffShown();
}

void MainWindow::showSnapshot(std::shared_ptr<const TraceSnapshot> snapshot) {
  shown_ = snapshot;
  const QString path = QString::fromStdString(snapshot->path);
  setWindowTitle(tr("%1 — gpuscope").arg(QFileInfo(path).fileName()));
  showWarnings(snapshot->warnings);
  const auto& s = snapshot->stats.summary;
  statusBar()->showMessage(tr("%1: %2 kernels, %3 API calls, %4 NVTX ranges")
                               .arg(path)
                               .arg(s.kernel_count)
                               .arg(s.api_call_count)
                               .arg(s.nvtx_range_count));
  kernels_->setSnapshot(snapshot);
  advisor_->setSnapshot(snapshot);
  timeline_->setSnapshot(snapshot);
  memory_->setSnapshot(snapshot);
  setAnalysedViewsEnabled(true);
  progress_->hide();
  emit traceShown(path);
}

void MainWindow::rememberRecent(const QString& path) {
  QSettings settings("gpuscope", "gpuscope-gui");
  QStringList recent = settings.value("recent").toStringList();
  recent.removeAll(path);
  recent.prepend(QFileInfo(path).absoluteFilePath());
  while (recent.size() > kMaxRecent) recent.removeLast();
  settings.setValue("recent", recent);
  fillRecentMenu();
}

void MainWindow::fillRecentMenu() {
  recent_->clear();
  const QStringList recent = QSettings("gpuscope", "gpuscope-gui").value("recent").toStringList();
  for (const QString& path : recent) {
    recent_->addAction(path, this, [this, path] { openTrace(path); });
  }
  recent_->setEnabled(!recent.isEmpty());
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QList<QUrl> urls = event->mimeData()->urls();
  if (!urls.isEmpty() && urls.front().isLocalFile()) openTrace(urls.front().toLocalFile());
}

}  // namespace gpuscope::gui
