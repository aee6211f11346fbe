// libFuzzer target: arbitrary bytes as a file for `gpuscope import` (torch.profiler / Kineto Chrome JSON, a
// PyTorch memory snapshot as JSON or pickle: the importer picks by content), then the imported trace
// through the loader and the advisor. An error Status or a trace, never a crash, a hang or undefined
// behaviour, and no half-written output left behind.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "advisor/advice.h"
#include "analyzer/trace_data.h"
#include "formats/trace_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = "/tmp/gpuscope-fuzz-import-" + std::to_string(getpid());
  static const std::string input = dir + ".in", output = dir + ".gpuscope";
  std::FILE* f = std::fopen(input.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  if (gpuscope::importTrace(input, output, true)) {
    gpuscope::Result<gpuscope::analysis::TraceData> trace = gpuscope::analysis::loadTrace(output);
    if (!trace) __builtin_trap();  // what import wrote must load
    (void)gpuscope::advisor::advise(gpuscope::advisor::buildContext(*trace));
  }
  return 0;
}
