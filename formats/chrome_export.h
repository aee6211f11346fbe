// Exports a trace as Chrome Trace Event JSON with Kineto's categories and argument names, so Perfetto,
// chrome://tracing, Holistic Trace Analysis and TensorBoard's trace viewer read it. Streams table by table:
// memory stays flat however long the trace is.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "formats/json_writer.h"
#include "formats/status.h"
#include "formats/trace_reader.h"

namespace gpuscope {

struct ChromeExportOptions {
  // Called now and then with rows done and (approximate) rows in total, for a progress bar.
  std::function<void(int64_t done, int64_t total)> progress;
};

// Writes the trace as one JSON object into json.
Status writeChromeTrace(TraceReader& reader, JsonWriter& json, const ChromeExportOptions& options = {});

// Writes it to path, which appears only once the export is complete. An empty trace is an error.
Status exportChromeTrace(TraceReader& reader, const std::string& path, bool overwrite,
                         const ChromeExportOptions& options = {});

}  // namespace gpuscope
