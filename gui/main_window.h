// gpuscope-gui's window: the views of one trace in tabs, the trace's data-quality warnings in a bar above
// them, File ▸ Open and recent files, drag and drop. Traces load off the GUI thread; the views
// get the finished snapshot. File ▸ Compare with… fills the Diff view.
#pragma once

#include <QFutureWatcher>
#include <QMainWindow>
#include <memory>

#include "formats/status.h"
#include "gui/diff_view.h"
#include "gui/trace_snapshot.h"

class QLabel;
class QMenu;
class QProgressBar;
class QTabWidget;

namespace gpuscope::gui {

class AdvisorView;
class KernelsView;
class MemoryView;
class TimelineView;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  // In the background: first the trace is loaded and its timeline shown (traceLoaded), then it is
  // analysed and every view filled (traceShown).
  void openTrace(const QString& path);
  void showSnapshot(std::shared_ptr<const TraceSnapshot> snapshot);  // an analysed snapshot, in every view
  bool showView(const QString& name);                                // "kernels", "advisor"; false if unknown
  static QStringList viewNames();
  void showOnTimeline(qint64 start_ns, qint64 end_ns);  // switches to the timeline, zoomed to the range
  KernelsView* kernelsView() const { return kernels_; }
  AdvisorView* advisorView() const { return advisor_; }
  TimelineView* timelineView() const { return timeline_; }
  MemoryView* memoryView() const { return memory_; }
  DiffView* diffView() const { return diff_; }
  void compareWith(const QString& path);  // in the background; the Diff view shows the result

 signals:
  void traceLoaded(const QString& path);  // the timeline shows it; the other views wait for the analyses
  void traceShown(const QString& path);   // every view shows it
  void traceFailed(const QString& message);
  void diffShown();

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  using LoadResult = Result<std::shared_ptr<const TraceSnapshot>>;
  void buildMenus();
  QWidget* timelinePage();
  void loadFinished();
  void showLoaded(std::shared_ptr<const TraceSnapshot> snapshot);
  void analysisFinished();
  void setAnalysedViewsEnabled(bool enabled);
  void showWarnings(const std::vector<std::string>& warnings);
  void compareFinished();
  void rememberRecent(const QString& path);
  void fillRecentMenu();

  QTabWidget* tabs_;
  QLabel* warnings_;
  QProgressBar* progress_;  // busy while a trace loads or is analysed: step 1 of 2, then 2 of 2
  KernelsView* kernels_;
  AdvisorView* advisor_;
  TimelineView* timeline_;
  MemoryView* memory_;
  DiffView* diff_;
  std::shared_ptr<const TraceSnapshot> shown_;
  QMenu* recent_ = nullptr;
  QFutureWatcher<LoadResult> loading_;
  QFutureWatcher<std::shared_ptr<const TraceSnapshot>> analysing_;
  QFutureWatcher<Result<std::shared_ptr<const DiffSnapshot>>> comparing_;
  QString loading_path_;
};

}  // namespace gpuscope::gui
