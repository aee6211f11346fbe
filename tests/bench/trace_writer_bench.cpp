// Trace writer throughput, rows per second on one core: the collector's writer thread appends rows in
// batched transactions (append+commit); finish() then builds indexes once.
// Run: build/bin/trace_writer_bench [--benchmark_filter=...]; results go to docs/benchmarks.md.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include "tests/bench/synthetic_trace.h"
#include "tests/support/sample_trace.h"

namespace gpuscope {
namespace {

constexpr int64_t kRows = 1'000'000;

template <typename MakeRow>
void appendRows(benchmark::State& state, MakeRow make_row, bool finish) {
  testing::TempDir dir;
  for (auto _ : state) {
    Result<TraceWriter> w = TraceWriter::create(
        dir.path("bench.gpuscope"), {.atomic = false, .overwrite = true, .page_size = 32768});  // as the collector
    if (!w) {
      state.SkipWithError(w.status().message().c_str());
      return;
    }
    // The API rows reference a string, the kernel rows a kernel configuration; both are ids here.
    const int64_t id = w->intern("cudaLaunchKernel").id;
    for (int64_t i = 0; i < kRows; ++i) {
      if (!w->append(make_row(i, id))) {
        state.SkipWithError("append failed");
        return;
      }
    }
    if (!(finish ? w->finish() : w->commit())) state.SkipWithError("commit failed");
  }
  state.SetItemsProcessed(state.iterations() * kRows);
  state.counters["rows/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * kRows), benchmark::Counter::kIsRate);
}

schema::ApiCallRow apiCall(int64_t i, int64_t name) { return bench::syntheticApiCall(i, schema::StringId{name}); }

void BM_AppendApiCalls(benchmark::State& state) { appendRows(state, apiCall, false); }
void BM_AppendKernels(benchmark::State& state) { appendRows(state, bench::syntheticKernel, false); }
void BM_AppendKernelsAndFinish(benchmark::State& state) { appendRows(state, bench::syntheticKernel, true); }

BENCHMARK(BM_AppendApiCalls)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AppendKernels)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AppendKernelsAndFinish)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace gpuscope

BENCHMARK_MAIN();
