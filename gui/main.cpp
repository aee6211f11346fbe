// gpuscope-gui [TRACE] [--diff OTHER] [--screenshot FILE [--view NAME]]
#include <QApplication>
#include <QCommandLineParser>
#include <cstdio>

#include "gui/main_window.h"
#include "gui/screenshot.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName("gpuscope-gui");
  QCommandLineParser parser;
  parser.setApplicationDescription("gpuscope's viewer: where the time and the memory of a GPU program go");
  parser.addHelpOption();
  parser.addPositionalArgument("trace", "a gpuscope trace, torch.profiler trace or PyTorch memory snapshot");
  const QCommandLineOption screenshot("screenshot", "render a view off-screen to this PNG file and exit", "file");
  const QCommandLineOption view(
      "view", "the view for --screenshot: " + gpuscope::gui::MainWindow::viewNames().join(", "), "name", "advisor");
  const QCommandLineOption diff("diff", "compare the trace with this one (the Diff view)", "other");
  parser.addOptions({screenshot, view, diff});
  parser.process(app);
  const QStringList traces = parser.positionalArguments();
  if (parser.isSet(screenshot)) {
    if (traces.size() != 1) {
      std::fprintf(stderr, "gpuscope-gui: --screenshot needs one trace\n");
      return 2;
    }
    const gpuscope::Status s = gpuscope::gui::renderScreenshot(traces.front(), parser.value(view),
                                                               parser.value(screenshot), parser.value(diff));
    if (!s) std::fprintf(stderr, "gpuscope-gui: %s\n", s.message().c_str());
    return s ? 0 : (s.kind() == gpuscope::ErrorKind::kUsage ? 2 : 1);
  }
  gpuscope::gui::MainWindow window;
  window.resize(1400, 900);
  window.show();
  if (parser.isSet(diff)) {  // once the trace is shown
    QObject::connect(
        &window, &gpuscope::gui::MainWindow::traceShown, &window,
        [&window, other = parser.value(diff)] { window.compareWith(other); }, Qt::SingleShotConnection);
  }
  if (!traces.isEmpty()) window.openTrace(traces.front());
  return QApplication::exec();
}
