// Exports a trace as Chrome Trace Event JSON with Kineto's categories and argument names, so Perfetto,
// chrome://tracing, Holistic Trace Analysis and TensorBoard's trace viewer read it. Streams table by table:
// memory stays flat however long the trace is.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "formats/json_writer.h"
#include "formats/status.h"
#include "formats/trace_reader.h"

namespace gpuscope {

// One step of the program (an iteration the analyzer found), on the host thread that ran it.
struct StepSpan {
  int64_t session_id = 0, thread_id = 0;
  int64_t start_ns = 0, end_ns = 0;
};

struct ChromeExportOptions {
  // Called now and then with rows done and (approximate) rows in total, for a progress bar.
  std::function<void(int64_t done, int64_t total)> progress;
  // Only this process (one rank of a job, as torch.profiler writes one file per rank): its GPUs get their
  // ordinals as pids.
  std::optional<int64_t> session_id;
  // Added to every correlation id. Holistic Trace Analysis narrows the ids to 16 bits when all of them are
  // below 32,768, then overflows; torch's own ids are large.
  int64_t correlation_offset = 0;
  // Written as torch.profiler's "ProfilerStep#N" ranges, which per-iteration tools (HTA) look for.
  std::vector<StepSpan> steps;
};

// Writes the trace as one JSON object into json.
Status writeChromeTrace(TraceReader& reader, JsonWriter& json, const ChromeExportOptions& options = {});

// Writes it to path, which appears only once the export is complete. An empty trace is an error.
Status exportChromeTrace(TraceReader& reader, const std::string& path, bool overwrite,
                         const ChromeExportOptions& options = {});

}  // namespace gpuscope
