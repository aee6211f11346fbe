// Analyzer speed and memory on large traces: builds traces of about 1, 3 and 10 million events by
// repeating a real H100 recording (tests/fixtures/pytorch_gpt2_step.gpuscope: GEMMs, attention, optimizer,
// copies, allocations, NVTX steps), then times loading plus every analysis and reports the peak resident
// memory. Each size runs in a child process, so its peak memory is its own.
// Run: build/bin/analyzer_bench [EVENTS...] [--keep DIR]; results go to docs/benchmarks.md.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "analyzer/fusion_chains.h"
#include "analyzer/iterations.h"
#include "analyzer/memory_categories.h"
#include "analyzer/memory_model.h"
#include "analyzer/memory_timeline.h"
#include "analyzer/stats.h"
#include "analyzer/timeline_analysis.h"
#include "formats/trace_reader.h"
#include "formats/trace_writer.h"
#include "tests/support/sample_trace.h"

namespace gpuscope {
namespace {

using namespace schema;
using Clock = std::chrono::steady_clock;

struct Source {
  std::vector<StringRow> strings;
  std::vector<SessionRow> sessions;
  std::vector<DeviceRow> devices;
  std::vector<KernelConfigRow> configs;
  std::vector<KernelRow> kernels;
  std::vector<ApiCallRow> api_calls;
  std::vector<MemcpyRow> copies;
  std::vector<MemsetRow> memsets;
  std::vector<MemoryEventRow> memory;
  std::vector<NvtxRow> nvtx;
  int64_t events() const {
    return static_cast<int64_t>(kernels.size() + api_calls.size() + copies.size() + memsets.size() + memory.size() +
                                nvtx.size());
  }
};

template <typename Row>
std::vector<Row> readAll(TraceReader& r) {
  Result<std::vector<Row>> rows = r.readAll<Row>();
  if (!rows) throw std::runtime_error(rows.status().message());
  return std::move(*rows);
}

Source readSource(const std::string& path) {
  Result<TraceReader> r = TraceReader::open(path);
  if (!r) throw std::runtime_error(r.status().message());
  return {readAll<StringRow>(*r),      readAll<SessionRow>(*r), readAll<DeviceRow>(*r), readAll<KernelConfigRow>(*r),
          readAll<KernelRow>(*r),      readAll<ApiCallRow>(*r), readAll<MemcpyRow>(*r), readAll<MemsetRow>(*r),
          readAll<MemoryEventRow>(*r), readAll<NvtxRow>(*r)};
}

// Writes copies of the source's events one after another in time, with correlation ids and allocation
// addresses moved so that every copy stays consistent on its own.
void generate(const Source& s, int64_t target_events, const std::string& path) {
  Result<TraceWriter> w = TraceWriter::create(path, {.overwrite = true, .page_size = 32768});
  if (!w) throw std::runtime_error(w.status().message());
  for (const auto& row : s.strings) (void)w->append(row);
  for (const auto& row : s.sessions) (void)w->append(row);
  for (const auto& row : s.devices) (void)w->append(row);
  for (const auto& row : s.configs) (void)w->append(row);
  const int64_t span = s.sessions[0].end_ns.value_or(s.sessions[0].start_ns) - s.sessions[0].start_ns + 1'000'000;
  const int64_t copies = (target_events + s.events() - 1) / s.events();
  for (int64_t c = 0; c < copies; ++c) {
    const int64_t dt = c * span, dc = c * 10'000'000, da = c << 36;
    for (KernelRow k : s.kernels) {
      k.start_ns += dt, k.end_ns += dt, k.correlation_id += dc;
      (void)w->append(k);
    }
    for (ApiCallRow a : s.api_calls) {
      a.start_ns += dt, a.end_ns += dt, a.correlation_id += dc;
      (void)w->append(a);
    }
    for (MemcpyRow m : s.copies) {
      m.start_ns += dt, m.end_ns += dt, m.correlation_id += dc;
      (void)w->append(m);
    }
    for (MemsetRow m : s.memsets) {
      m.start_ns += dt, m.end_ns += dt, m.correlation_id += dc;
      (void)w->append(m);
    }
    for (MemoryEventRow m : s.memory) {
      m.timestamp_ns += dt, m.address += da;
      if (m.correlation_id) *m.correlation_id += dc;
      (void)w->append(m);
    }
    for (NvtxRow n : s.nvtx) {
      n.start_ns += dt, n.end_ns += dt;
      (void)w->append(n);
    }
  }
  if (Status st = w->finish(); !st) throw std::runtime_error(st.message());
}

double seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

// Loads and analyses one trace, printing the time of each step; runs in a child process.
int analyse(const std::string& path) {
  const auto t0 = Clock::now();
  Result<analysis::TraceData> trace = analysis::loadTrace(path);
  if (!trace) {
    std::fprintf(stderr, "%s\n", trace.status().message().c_str());
    return 1;
  }
  const double load = seconds(t0);
  const auto t1 = Clock::now();
  const analysis::Stats stats = analysis::computeStats(*trace);
  const auto timeline = analysis::analyzeTimeline(*trace);
  const analysis::Iterations iterations = analysis::findIterations(*trace);
  const analysis::MemoryAnalysis memory = analysis::analyzeMemory(*trace, iterations);
  const analysis::MemoryCategories categories = analysis::categorizeMemory(*trace, iterations, memory);
  const analysis::MemoryModel model = analysis::fitMemoryModel(memory, categories, iterations);
  const auto fusion = analysis::findFusableChains(*trace, iterations);
  const double analyse_s = seconds(t1);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf(
      "%10zu events | load %6.2f s | analyses %6.2f s | total %6.2f s | peak RSS %6.0f MB | %zu kernels, %zu "
      "iterations, %zu fusion patterns, peak memory %.1f GiB\n",
      trace->eventCount(), load, analyse_s, load + analyse_s, usage.ru_maxrss / 1024.0, trace->kernels.size(),
      iterations.list.size(), fusion.size(), static_cast<double>(model.measured_peak_bytes) / (1 << 30));
  return stats.summary.kernel_count > 0 && !timeline.empty() ? 0 : 1;
}

}  // namespace
}  // namespace gpuscope

int main(int argc, char** argv) {
  using namespace gpuscope;
  std::vector<int64_t> sizes;
  std::string keep;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--keep" && i + 1 < argc) {
      keep = argv[++i];
    } else {
      sizes.push_back(std::atoll(argv[i]));
    }
  }
  if (sizes.empty()) sizes = {1'000'000, 3'000'000, 10'000'000};
  const std::string dir = keep.empty() ? std::filesystem::temp_directory_path().string() : keep;
  const Source source = readSource(testing::fixturePath("pytorch_gpt2_step.gpuscope"));
  for (int64_t n : sizes) {
    const std::string path = dir + "/analyzer_bench_" + std::to_string(n) + ".gpuscope";
    if (!std::filesystem::exists(path)) {
      const auto t0 = Clock::now();
      generate(source, n, path);
      std::fprintf(stderr, "generated %s in %.1f s\n", path.c_str(), seconds(t0));
    }
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
      const int rc = analyse(path);
      std::fflush(stdout);
      _exit(rc);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (keep.empty()) std::filesystem::remove(path);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  }
  return 0;
}
