#include "gui/screenshot.h"

#include <QApplication>
#include <QPixmap>

#include "gui/main_window.h"

namespace gpuscope::gui {

Status renderScreenshot(const QString& trace, const QString& view, const QString& file, const QString& compare) {
  MainWindow window;
  if (!window.showView(view)) {
    return Status(ErrorKind::kUsage, "unknown view '" + view.toStdString() + "'; the views are " +
                                         MainWindow::viewNames().join(", ").toStdString());
  }
  Result<std::shared_ptr<const TraceSnapshot>> snapshot = analyseTrace(trace.toStdString());
  if (!snapshot) return snapshot.status();
  if (!compare.isEmpty()) {
    Result<std::shared_ptr<const DiffSnapshot>> diff = compareTraces(*snapshot, compare.toStdString());
    if (!diff) return diff.status();
    window.diffView()->setDiff(std::move(*diff));
  }
  window.showSnapshot(std::move(*snapshot));
  window.resize(kScreenshotWidth, kScreenshotHeight);
  window.show();
  QApplication::processEvents();  // lay out and paint once before grabbing
  const QPixmap pixels = window.grab();
  if (pixels.isNull() || !pixels.save(file, "PNG")) {
    return Status(ErrorKind::kIo, "cannot write the screenshot to " + file.toStdString());
  }
  return Status::ok();
}

}  // namespace gpuscope::gui
