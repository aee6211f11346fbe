// `gpuscope-gui TRACE [--diff OTHER] --screenshot FILE [--view NAME]`: one view of a trace rendered off-screen to PNG,
// for the docs and the tests. The trace is analysed in the calling thread; the window never needs a display.
#pragma once

#include <QString>

#include "formats/status.h"

namespace gpuscope::gui {

inline constexpr int kScreenshotWidth = 1400, kScreenshotHeight = 900;

// With `compare` (another trace), the Diff view has the two compared.
Status renderScreenshot(const QString& trace, const QString& view, const QString& file, const QString& compare = {});

}  // namespace gpuscope::gui
