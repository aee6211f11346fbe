// libFuzzer target: arbitrary bytes as a trace file through the reader and the Chrome exporter.
// Whatever the bytes, the result is an error Status or valid JSON, never a crash or a hang.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "formats/chrome_export.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/gpuscope-fuzz-" + std::to_string(getpid()) + ".gpuscope";
  if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
  } else {
    return 0;
  }
  gpuscope::Result<gpuscope::TraceReader> reader = gpuscope::TraceReader::open(path);
  if (reader) {
    gpuscope::JsonWriter json;
    (void)gpuscope::writeChromeTrace(*reader, json);
  }
  return 0;
}
