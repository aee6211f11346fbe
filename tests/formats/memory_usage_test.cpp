// record --jax: the JAX bridge's jax-<pid>.json (each GPU's memory_stats() from XLA, as gpuscope_jax writes it)
// merged into the session of its process as memory_usage rows; windows keep the readings inside them; a file that
// is not one is said in data_quality and the trace kept; the export draws the readings as a counter.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "formats/chrome_export.h"
#include "formats/json_writer.h"
#include "formats/memory_usage.h"
#include "formats/trace_merge.h"
#include "formats/trace_reader.h"
#include "tests/support/sample_trace.h"

namespace gpuscope {
namespace {

// As gpuscope_jax writes it: [time_us, bytes_in_use, peak_bytes_in_use, pool_bytes, bytes_limit] by device id.
nlohmann::json readings() {
  const nlohmann::json none;
  return {{"memory_usage",
           {{"0",
             {{1700000000000001, 1 << 20, 1 << 20, 3ll << 30, 4ll << 30},
              {1700000000000100, 5 << 20, 6 << 20, 3ll << 30, 4ll << 30},
              {1700000000000200, 2 << 20, 6 << 20, none, none}}}}},
          {"gpuscope", {{"version", 1}, {"allocator", "xla"}, {"full", false}, {"failed", none}}}};
}

// The sample trace merged with `text` as its process's jax-<pid>.json, inside `windows` (none: all of it); the
// merged trace is dir/merged.gpuscope.
std::vector<schema::MemoryUsageRow> mergeWith(testing::TempDir& dir, const std::string& text,
                                              std::vector<TimeWindow> windows = {}) {
  EXPECT_TRUE(testing::writeSampleTrace(dir.path("part.gpuscope")));
  Result<TraceReader> part = TraceReader::open(dir.path("part.gpuscope"));
  EXPECT_TRUE(part);
  if (!part) return {};
  const int64_t pid = (*part->readAll<schema::SessionRow>()).front().pid;
  testing::writeFile(dir.path("jax-" + std::to_string(pid) + ".json"), text);
  MergeOptions options;
  options.torch_memory_dir = dir.path("");
  options.windows = std::move(windows);
  EXPECT_TRUE(mergeTraces({dir.path("part.gpuscope")}, dir.path("merged.gpuscope"), options));
  Result<TraceReader> merged = TraceReader::open(dir.path("merged.gpuscope"));
  EXPECT_TRUE(merged);
  if (!merged) return {};
  return *merged->readAll<schema::MemoryUsageRow>();
}

// Whether the merged trace's data_quality has a row of `code` whose message holds `words`.
bool saidIn(testing::TempDir& dir, const std::string& code, const std::string& words) {
  Result<TraceReader> merged = TraceReader::open(dir.path("merged.gpuscope"));
  bool said = false;
  if (!merged) return said;
  (void)merged->forEach<schema::DataQualityRow>([&](const schema::DataQualityRow& q) {
    said |= q.code == code && q.message.find(words) != std::string::npos;
    return true;
  });
  return said;
}

TEST(MemoryUsage, MergeAddsXlasReadingsToTheirProcess) {
  testing::TempDir dir;
  testing::writeFile(dir.path("jax-1.json"), "not json");  // no such process: never read
  const std::vector<schema::MemoryUsageRow> rows = mergeWith(dir, readings().dump());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1].session_id, 1);
  EXPECT_EQ(rows[1].allocator, "xla");
  EXPECT_EQ(rows[1].timestamp_ns, 1700000000000100000);  // µs to ns; the sample trace's clock is Unix time
  EXPECT_EQ(rows[1].in_use_bytes, 5 << 20);
  EXPECT_EQ(rows[1].peak_in_use_bytes, 6 << 20);
  EXPECT_EQ(rows[1].reserved_bytes, 3ll << 30);
  EXPECT_EQ(rows[2].reserved_bytes, std::nullopt);  // XLA did not report it: absent, not 0
  EXPECT_EQ(rows[2].limit_bytes, std::nullopt);
  EXPECT_FALSE(saidIn(dir, "memory_usage_unreadable", ""));
}

// Perfetto and chrome://tracing show what XLA had in use beside CUDA's "Device memory".
TEST(MemoryUsage, ExportDrawsXlasInUseAsACounter) {
  testing::TempDir dir;
  ASSERT_EQ(mergeWith(dir, readings().dump()).size(), 3u);
  Result<TraceReader> reader = TraceReader::open(dir.path("merged.gpuscope"));
  ASSERT_TRUE(reader);
  JsonWriter out;
  ASSERT_TRUE(writeChromeTrace(*reader, out));
  std::vector<int64_t> in_use;
  const nlohmann::json exported = nlohmann::json::parse(out.text());
  for (const nlohmann::json& e : exported["traceEvents"]) {
    if (e["name"] == "XLA in use" && e["ph"] == "C") in_use.push_back(e["args"]["in use (bytes)"]);
  }
  EXPECT_EQ(in_use, (std::vector<int64_t>{1 << 20, 5 << 20, 2 << 20}));
}

TEST(MemoryUsage, MergeWindowsKeepOnlyTheReadingsInside) {
  testing::TempDir dir;
  const std::vector<schema::MemoryUsageRow> rows =
      mergeWith(dir, readings().dump(), {{1700000000000050000, 1700000000000150000}});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].in_use_bytes, 5 << 20);
}

TEST(MemoryUsage, AFileThatIsNotOneIsSaidAndTheTraceKept) {
  for (const std::string text :
       {"{\"truncated", "{\"memory_usage\": {\"zero\": []}}", "{\"memory_usage\": {\"0\": [[1, 2, 3]]}}", "[1, 2]"}) {
    testing::TempDir dir;
    EXPECT_TRUE(mergeWith(dir, text).empty()) << text;
    Result<TraceReader> merged = TraceReader::open(dir.path("merged.gpuscope"));
    ASSERT_TRUE(merged);
    EXPECT_GT(*merged->count<schema::KernelRow>(), 0);
    EXPECT_TRUE(saidIn(dir, "memory_usage_unreadable", "jax-")) << text;
  }
}

TEST(MemoryUsage, ABridgeThatStoppedReadingIsSaid) {
  testing::TempDir dir;
  nlohmann::json file = readings();
  file["gpuscope"]["failed"] = "RuntimeError('backend gone')";
  EXPECT_EQ(mergeWith(dir, file.dump()).size(), 3u);
  EXPECT_TRUE(saidIn(dir, "memory_usage_incomplete", "backend gone"));
}

}  // namespace
}  // namespace gpuscope
