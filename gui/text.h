// Text for the views: gpuscope's strings, and numbers with their units as the CLI writes them
// (analyzer/units.h), as QString.
#pragma once

#include <QString>
#include <cstdint>
#include <string_view>

#include "analyzer/iterations.h"
#include "analyzer/units.h"

namespace gpuscope::gui {

inline QString qs(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }
inline QString durationText(int64_t ns) { return qs(analysis::formatDuration(ns)); }
inline QString bytesText(int64_t bytes) { return qs(analysis::formatBytes(bytes)); }

// An iteration's label on the timeline: "step 3", "step 0 · warm-up", and where the PyTorch bridge removed its
// module hooks part-way (record --torch-steps), "step 2 · module ranges" for the annotated steps and
// "step 9 · hook-free" for those the advisor times.
inline QString stepText(const analysis::Iterations& iterations, size_t index) {
  const analysis::Iteration& it = iterations.list[index];
  QString text = QString("step %1").arg(index);
  if (it.warmup) return text + " · warm-up";
  if (it.unrecorded) return text + " · recording paused";
  if (iterations.hooks_removed_ns < 0) return text;
  return text + (it.hook_free ? " · hook-free" : " · module ranges");
}

}  // namespace gpuscope::gui
