// Text for the views: gpuscope's strings, and numbers with their units as the CLI writes them
// (analyzer/units.h), as QString.
#pragma once

#include <QString>
#include <cstdint>
#include <string_view>

#include "analyzer/units.h"

namespace gpuscope::gui {

inline QString qs(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }
inline QString durationText(int64_t ns) { return qs(analysis::formatDuration(ns)); }
inline QString bytesText(int64_t bytes) { return qs(analysis::formatBytes(bytes)); }

}  // namespace gpuscope::gui
