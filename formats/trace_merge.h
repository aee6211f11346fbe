// Merges traces (one per process of a run, or per rank of a job) into one: sessions are renumbered,
// strings and kernel configurations re-interned, and every reference rewritten to match.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/status.h"
#include "formats/trace_schema.h"

namespace gpuscope {

// A span of the trace clock (ns) whose events are kept.
struct TimeWindow {
  int64_t start_ns;
  int64_t end_ns;
};

struct MergeOptions {
  bool overwrite = false;
  // When not empty, only events overlapping one of these are kept (processes, devices and names always
  // are). This is how `record --delay/--duration/--capture-range` narrow a recording.
  std::vector<TimeWindow> windows;
  std::string window_note;  // said in the merged trace's data_quality table when windows are given
  // Where `record --torch`, `--cupy` or `--jax` left the Python bridge's allocator files (torch-<pid>.json,
  // cupy-<pid>.json, jax-<pid>.json): each is added to the session of its process. Empty: none.
  std::string torch_memory_dir;
  // Rows about the whole recording, added to the merged trace's data_quality (the recording's cost per kernel
  // launch that `record` measured after the program).
  std::vector<schema::DataQualityRow> notes;
};

// The spans of NVTX ranges named `name` in the traces, for --capture-range.
Result<std::vector<TimeWindow>> nvtxRangeWindows(const std::vector<std::string>& traces, const std::string& name);

Status mergeTraces(const std::vector<std::string>& inputs, const std::string& output, const MergeOptions& options);

}  // namespace gpuscope
