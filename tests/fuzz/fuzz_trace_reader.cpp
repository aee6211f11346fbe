// libFuzzer target: arbitrary bytes as a trace file through the reader, the Chrome exporter, every
// analysis of `gpuscope stats` and `gpuscope diff`, and the advisor with all its reports. Whatever the bytes, the
// result is an error Status or an answer, never a crash, a hang or undefined behaviour.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "advisor/advice.h"
#include "advisor/report.h"
#include "analyzer/fusion_chains.h"
#include "analyzer/memory_model.h"
#include "analyzer/memory_pools.h"
#include "analyzer/stats.h"
#include "analyzer/timeline_analysis.h"
#include "analyzer/trace_diff.h"
#include "formats/chrome_export.h"

namespace {

void analyse(const std::string& path) {
  using namespace gpuscope::analysis;
  gpuscope::Result<TraceData> trace = loadTrace(path);
  if (!trace) return;
  (void)computeStats(*trace);
  (void)analyzeTimeline(*trace);
  const Iterations iterations = findIterations(*trace);
  const MemoryAnalysis memory = analyzeMemory(*trace, iterations);
  const MemoryCategories categories = categorizeMemory(*trace, iterations, memory);
  (void)fitMemoryModel(memory, categories, iterations);
  (void)findFusableChains(*trace, iterations);
  (void)diffTraces(*trace, *trace);
  (void)analyzePools(*trace);
  const gpuscope::advisor::Advice advice = gpuscope::advisor::advise(gpuscope::advisor::buildContext(*trace));
  (void)gpuscope::advisor::renderText(advice, 80, true);
  (void)gpuscope::advisor::renderMarkdown(advice);
  (void)gpuscope::advisor::renderHtml(advice);
  (void)gpuscope::advisor::renderJson(advice);
  (void)gpuscope::plan::toJson(gpuscope::advisor::makePlan(advice));
}

}  // namespace

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
    analyse(path);
  }
  return 0;
}
