// Chrome export: events per second, and peak memory of the exporting process at two trace sizes, to show
// that memory does not grow with the trace (the export streams).
// Run: build/bin/chrome_export_bench [small_launches] [large_launches]; results go to docs/benchmarks.md.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "formats/chrome_export.h"
#include "tests/bench/synthetic_trace.h"
#include "tests/support/sample_trace.h"

using namespace gpuscope;

namespace {

bool makeTrace(const std::string& path, int64_t launches) {
  Result<TraceWriter> w = TraceWriter::create(path, {.atomic = true, .overwrite = true});
  return w && bench::writeSyntheticRows(*w, launches) && w->finish();
}

// Exports in a child process so its peak resident memory is the export's alone.
void measureExport(const std::string& trace, const std::string& out, int64_t launches) {
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    Result<TraceReader> reader = TraceReader::open(trace);
    _exit(reader && exportChromeTrace(*reader, out, true) ? 0 : 1);
  }
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("| %lld launches | %.2f s | %.2f M rows/s | %.1f MB JSON | %.1f MB peak RSS | %s |\n",
              static_cast<long long>(launches), seconds, static_cast<double>(launches * 2) / seconds / 1e6,
              static_cast<double>(std::filesystem::file_size(out)) / 1e6, static_cast<double>(usage.ru_maxrss) / 1e3,
              WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "ok" : "FAILED");
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t small = argc > 1 ? std::atoll(argv[1]) : 100'000;
  const int64_t large = argc > 2 ? std::atoll(argv[2]) : 2'000'000;
  testing::TempDir dir;
  std::printf("| trace | export time | throughput | output | memory | |\n|---|---|---|---|---|---|\n");
  for (int64_t launches : {small, large}) {
    const std::string trace = dir.path("t" + std::to_string(launches) + ".gpuscope");
    if (!makeTrace(trace, launches)) {
      std::fprintf(stderr, "chrome_export_bench: could not write %s\n", trace.c_str());
      return 1;
    }
    measureExport(trace, dir.path("out.json"), launches);
  }
  return 0;
}
