// Chrome export: the golden file, Kineto's field names, flows, hostile names, memory counters.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "formats/chrome_export.h"
#include "tests/support/sample_trace.h"
#include "tests/support/trace_builder.h"

namespace gpuscope {
namespace {

using nlohmann::json;
using testing::TempDir;

std::string exportSample(TempDir& dir) {
  EXPECT_TRUE(testing::writeSampleTrace(dir.path("t.gpuscope")));
  Result<TraceReader> reader = TraceReader::open(dir.path("t.gpuscope"));
  EXPECT_TRUE(reader) << reader.status().message();
  JsonWriter out;
  EXPECT_TRUE(writeChromeTrace(*reader, out));
  return out.text();
}

std::vector<json> eventsOf(const json& trace, std::string_view cat) {
  std::vector<json> events;
  for (const json& e : trace["traceEvents"]) {
    if (e.value("cat", "") == cat) events.push_back(e);
  }
  return events;
}

// The golden file pins the exact output. To update it after an intended change:
//   GPUSCOPE_UPDATE_GOLDEN=1 ctest -R ChromeExport.MatchesGolden
TEST(ChromeExport, MatchesGolden) {
  TempDir dir;
  std::string text = exportSample(dir);
  // The trace name is the temporary path; pin it so the golden file does not depend on it.
  const std::string path = dir.path("t.gpuscope");
  text.replace(text.find(path), path.size(), "sample.gpuscope");
  const std::string golden_path = std::string(GPUSCOPE_SOURCE_DIR) + "/tests/golden/sample_trace.chrome.json";
  if (std::getenv("GPUSCOPE_UPDATE_GOLDEN")) testing::writeFile(golden_path, text + "\n");
  EXPECT_EQ(text + "\n", testing::readFile(golden_path));
}

// Unified memory on a track of its own under its GPU: a migration and a GPU fault group as spans, a CPU fault as an
// instant of the process; a thrashing record (no duration, no single GPU) is left to the stats.
TEST(ChromeExport, UnifiedMemoryHasATrackUnderItsGpu) {
  TempDir dir;
  testing::TraceBuilder b(dir.path("um.gpuscope"));
  b.kernel("k", 1'000'000, 9'000'000);
  b.row(schema::UnifiedMemoryRow{1, schema::MigrationKind::kDeviceFault, 2'000'000, 2'300'000, 12, 0, 0});
  b.row(schema::UnifiedMemoryRow{1, schema::MigrationKind::kToDevice, 2'300'000, 2'800'000, 2 << 20, 0, {}, 0});
  b.row(schema::UnifiedMemoryRow{1, schema::MigrationKind::kHostFault, 3'000'000, 3'000'000, 0x4000});
  b.row(schema::UnifiedMemoryRow{1, schema::MigrationKind::kThrashing, 3'500'000, 3'500'000, 4096});
  ASSERT_TRUE(b.finish());
  Result<TraceReader> reader = TraceReader::open(dir.path("um.gpuscope"));
  ASSERT_TRUE(reader) << reader.status().message();
  JsonWriter out;
  ASSERT_TRUE(writeChromeTrace(*reader, out));
  const json trace = json::parse(out.text());
  const std::vector<json> um = eventsOf(trace, "unified_memory");
  ASSERT_EQ(um.size(), 3u);
  EXPECT_EQ(um[0]["name"], "device_fault");
  EXPECT_EQ(um[0]["args"]["faults"], 12);
  EXPECT_EQ(um[1]["name"], "to_device");
  EXPECT_EQ(um[1]["args"]["bytes"], 2 << 20);
  EXPECT_EQ(um[1]["dur"], 500.0);
  EXPECT_EQ(um[0]["pid"], um[1]["pid"]);
  EXPECT_EQ(um[1]["tid"], um[0]["tid"]);
  EXPECT_EQ(um[2]["ph"], "i");
  EXPECT_EQ(um[2]["name"], "host_fault");
  int tracks = 0;
  for (const json& e : trace["traceEvents"]) {
    tracks += e.value("ph", "") == "M" && e["args"].value("name", "") == "Unified memory" && e["pid"] == um[0]["pid"] &&
              e["tid"] == um[0]["tid"];
  }
  EXPECT_EQ(tracks, 1);
}

// A range's span on the GPU, as torch.profiler writes a record_function's: on each stream, from the first start to
// the last end of what its thread launched inside it; none for a thread that launched nothing inside it.
TEST(ChromeExport, RangesAreProjectedOntoTheStreamsTheirLaunchesRanOn) {
  TempDir dir;
  testing::TraceBuilder b(dir.path("ranges.gpuscope"));
  b.nvtx("forward", 100'000, 200'000);
  b.kernel("inside", 300'000, 400'000, 7, 110'000);
  b.kernel("inside_too", 420'000, 500'000, 7, 150'000);
  b.kernel("other_stream", 430'000, 450'000, 9, 160'000);
  b.kernel("after", 600'000, 700'000, 7, 250'000);
  b.nvtx("idle", 800'000, 900'000);
  b.nvtx("other_thread", 100'000, 200'000, 2);
  ASSERT_TRUE(b.finish());
  Result<TraceReader> reader = TraceReader::open(dir.path("ranges.gpuscope"));
  ASSERT_TRUE(reader) << reader.status().message();
  JsonWriter out;
  ASSERT_TRUE(writeChromeTrace(*reader, out));
  std::vector<json> spans = eventsOf(json::parse(out.text()), "gpu_user_annotation");
  std::sort(spans.begin(), spans.end(), [](const json& x, const json& y) { return x["tid"] < y["tid"]; });
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0]["name"], "forward");
  EXPECT_EQ(spans[0]["tid"], 7);
  EXPECT_EQ(spans[0]["dur"], 200.0);  // 300 to 500 us: the two kernels launched inside, not the one after
  EXPECT_EQ(spans[1]["tid"], 9);
  EXPECT_EQ(spans[1]["dur"], 20.0);
  EXPECT_EQ(spans[0]["pid"], eventsOf(json::parse(out.text()), "kernel")[0]["pid"]);
}

TEST(ChromeExport, IsValidJsonWithKinetoTopLevelKeys) {
  TempDir dir;
  const json trace = json::parse(exportSample(dir));
  for (const char* key : {"schemaVersion", "deviceProperties", "traceEvents", "displayTimeUnit", "baseTimeNanoseconds",
                          "traceName", "cuda_driver_version", "distributedInfo"}) {
    EXPECT_TRUE(trace.contains(key)) << key;
  }
  ASSERT_EQ(trace["deviceProperties"].size(), 1u);
  EXPECT_EQ(trace["deviceProperties"][0]["name"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(trace["deviceProperties"][0]["numSms"], 132);
}

TEST(ChromeExport, KernelsCarryKinetoArgumentsOnDeviceAndStreamLanes) {
  TempDir dir;
  const json trace = json::parse(exportSample(dir));
  const std::vector<json> kernels = eventsOf(trace, "kernel");
  ASSERT_EQ(kernels.size(), 5u);
  const json& k = kernels[0];
  EXPECT_EQ(k["ph"], "X");
  EXPECT_EQ(k["pid"], 0);  // device ordinal, as Kineto writes it
  EXPECT_EQ(k["tid"], 7);  // stream id
  EXPECT_EQ(k["dur"], 120.0);
  for (const char* arg : {"correlation", "device", "context", "stream", "registers per thread", "shared memory", "grid",
                          "block", "queued"}) {
    EXPECT_TRUE(k["args"].contains(arg)) << arg;
  }
  EXPECT_EQ(k["args"]["grid"], json::array({1024, 1, 1}));
}

TEST(ChromeExport, EveryLaunchHasOneFlowFromApiCallToGpuWork) {
  TempDir dir;
  const json trace = json::parse(exportSample(dir));
  std::map<int64_t, json> starts, finishes;
  for (const json& e : eventsOf(trace, "ac2g")) {
    auto& side = e["ph"] == "s" ? starts : finishes;
    EXPECT_TRUE(side.emplace(e["id"].get<int64_t>(), e).second) << "duplicate flow " << e.dump();
  }
  // 5 kernels + 1 memcpy + 1 memset + 1 graph launch, each issued by a recorded API call.
  EXPECT_EQ(starts.size(), 8u);
  ASSERT_EQ(starts.size(), finishes.size());
  for (const auto& [id, s] : starts) {
    ASSERT_TRUE(finishes.contains(id)) << id;
    EXPECT_EQ(s["pid"], 4242);          // from the CPU process...
    EXPECT_EQ(finishes[id]["pid"], 0);  // ...to the GPU
    EXPECT_EQ(finishes[id]["bp"], "e");
    EXPECT_LE(s["ts"].get<double>(), finishes[id]["ts"].get<double>());
  }
}

TEST(ChromeExport, HostileKernelNameSurvivesAsValidText) {
  TempDir dir;
  const json trace = json::parse(exportSample(dir));
  bool found = false;
  for (const json& k : eventsOf(trace, "kernel")) {
    const std::string name = k["name"];
    if (name.find("scale<") == std::string::npos) continue;
    found = true;
    EXPECT_NE(name.find("\"q\\\"uote\""), std::string::npos);
    EXPECT_NE(name.find("\n\t\x01"), std::string::npos);
    EXPECT_NE(name.find("bad:\xef\xbf\xbd\xef\xbf\xbd"), std::string::npos);  // invalid bytes → U+FFFD
    EXPECT_NE(name.find("caf\xc3\xa9 \xf0\x9f\x9a\x80"), std::string::npos);  // valid UTF-8 kept
  }
  EXPECT_TRUE(found);
}

TEST(ChromeExport, CopiesSetsApiCallsSyncsAndAnnotations) {
  TempDir dir;
  const json trace = json::parse(exportSample(dir));
  const std::vector<json> copies = eventsOf(trace, "gpu_memcpy");
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0]["name"], "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(copies[0]["args"]["bytes"], 4 << 20);
  EXPECT_NEAR(copies[0]["args"]["memory bandwidth (GB/s)"].get<double>(), 4194304.0 / 680000.0, 1e-9);
  EXPECT_EQ(eventsOf(trace, "gpu_memset").size(), 1u);
  EXPECT_EQ(eventsOf(trace, "cuda_runtime").size(), 9u);
  EXPECT_EQ(eventsOf(trace, "cuda_driver").size(), 1u);
  EXPECT_EQ(eventsOf(trace, "cuda_sync").size(), 1u);
  const std::vector<json> nvtx = eventsOf(trace, "user_annotation");
  ASSERT_EQ(nvtx.size(), 3u);
  EXPECT_EQ(nvtx[1]["args"]["domain"], "gpuscope");
  EXPECT_EQ(nvtx[2]["ph"], "i");
  ASSERT_EQ(trace["gpuscopeDataQuality"].size(), 1u);
  EXPECT_EQ(trace["gpuscopeDataQuality"][0]["code"], "dropped_records");
}

// The base time is the start of recording; the first event (cudaMalloc) came 100 µs later.
TEST(ChromeExport, TimestampsAreRelativeToTheBaseTime) {
  TempDir dir;
  const json trace = json::parse(exportSample(dir));
  EXPECT_EQ(trace["baseTimeNanoseconds"], 1'763'800'000'000'000'000);
  double earliest = 1e300;
  for (const json& e : trace["traceEvents"]) {
    if (e.contains("ts")) earliest = std::min(earliest, e["ts"].get<double>());
  }
  EXPECT_EQ(earliest, 100.0);
}

TEST(ChromeExport, MemoryCountersFollowAllocationsAndFrees) {
  TempDir dir;
  const json trace = json::parse(exportSample(dir));
  std::vector<int64_t> device;
  for (const json& e : eventsOf(trace, "gpu_memory")) {
    EXPECT_EQ(e["ph"], "C");
    if (e["name"] == "Device memory") device.push_back(e["args"]["allocated (bytes)"]);
  }
  EXPECT_EQ(device, (std::vector<int64_t>{4096, 4096 + (256 << 20), 4096}));
}

// record --torch: PyTorch's tensors get a counter of their own beside CUDA's device memory.
TEST(ChromeExport, TorchBridgeTracesCountTensors) {
  Result<TraceReader> reader = TraceReader::open(testing::fixturePath("pytorch_bridge_train.gpuscope"));
  ASSERT_TRUE(reader);
  JsonWriter out;
  ASSERT_TRUE(writeChromeTrace(*reader, out));
  const json trace = json::parse(out.text());
  int64_t counters = 0, peak = 0, last = -1;
  for (const json& e : eventsOf(trace, "gpu_memory")) {
    if (e["name"] != "PyTorch tensors") continue;
    ++counters;
    last = e["args"]["allocated (bytes)"].get<int64_t>();
    EXPECT_GE(last, 0);
    peak = std::max(peak, last);
  }
  EXPECT_EQ(counters, 1233 + 1230);                                // every allocation and completed free
  EXPECT_NEAR(static_cast<double>(peak) / (1 << 20), 187.1, 0.1);  // the analyzer's tensor peak
  EXPECT_GT(last, 0);  // the parameters and optimizer state still held at the end
}

TEST(ChromeExport, ProcessThreadAndStreamNamesAreMetadata) {
  TempDir dir;
  const json trace = json::parse(exportSample(dir));
  std::map<std::string, std::string> names;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] != "M" || !e["args"].contains("name")) continue;
    names[e["name"].get<std::string>() + " " + std::to_string(e["pid"].get<int64_t>()) + " " +
          std::to_string(e.value("tid", -1))] = e["args"]["name"];
  }
  EXPECT_EQ(names["process_name 4242 -1"], "python (pid 4242) rank 0");
  EXPECT_EQ(names["process_name 0 -1"], "GPU 0: NVIDIA H100 80GB HBM3");
  EXPECT_EQ(names["thread_name 4242 4242"], "python");
  EXPECT_EQ(names["thread_name 0 7"], "stream 7");
  EXPECT_EQ(names["thread_name 0 13"], "stream 13");
}

// One rank of the real 2-rank DDP job (tests/fixtures/multirank), exported as torch.profiler writes a rank's
// file and as Holistic Trace Analysis reads it (../shared/HTA_COMPAT.md): only that process's events, its GPUs
// under their ordinals, torch's spacing of distributedInfo, the runtime's own call names, large correlation
// ids, and the steps given as ProfilerStep#N.
TEST(ChromeExport, OneRankOfAJobAsTorchWritesIt) {
  Result<TraceReader> reader = TraceReader::open(GPUSCOPE_MULTIRANK_TRACE);
  ASSERT_TRUE(reader) << reader.status().message();
  ChromeExportOptions options;
  options.session_id = 3;  // rank 1, pid 651
  options.correlation_offset = 1'000'000;
  options.steps = {{3, 651, 1'795'478'364'000'000'000, 1'795'478'364'030'000'000},
                   {2, 650, 1'795'478'364'000'000'000, 1'795'478'364'030'000'000}};  // another rank's: left out
  JsonWriter out;
  ASSERT_TRUE(writeChromeTrace(*reader, out, options));
  const std::string& text = out.text();
  EXPECT_NE(text.find("\"distributedInfo\":{\"rank\": 1, \"world_size\": 2}"), std::string::npos);
  const json trace = json::parse(text);
  std::set<int64_t> pids;
  int64_t kernels = 0, min_correlation = INT64_MAX, steps = 0, all_reduces = 0;
  for (const json& e : trace["traceEvents"]) {
    // (CUPTI reports rank 1's module globals on device 0: memory counters are left out here.)
    if (e["ph"] != "M" && e["ph"] != "C") pids.insert(e["pid"].get<int64_t>());
    if (e.value("cat", "") == "kernel") ++kernels;
    if (e.value("cat", "") == "kernel" && e["args"].value("Collective name", "") == "allreduce") {
      EXPECT_EQ(e["args"]["dtype"], "Float");  // ncclDevKernel_AllReduce_Sum_f32_RING_LL
      ++all_reduces;
    }
    if (e.contains("args") && e["args"].contains("correlation")) {
      min_correlation = std::min(min_correlation, e["args"]["correlation"].get<int64_t>());
    }
    if (e.value("cat", "") == "cuda_runtime") {
      EXPECT_EQ(e["name"].get<std::string>().find("_v"), std::string::npos) << e["name"];
    }
    if (e.value("name", "").starts_with("ProfilerStep#")) {
      EXPECT_EQ(e["name"], "ProfilerStep#0");
      EXPECT_EQ(e["tid"], 651);
      ++steps;
    }
  }
  EXPECT_EQ(pids, (std::set<int64_t>{1, 651}));  // GPU 1, and the process
  EXPECT_EQ(kernels, 8863);
  EXPECT_GE(min_correlation, 1'000'000);
  EXPECT_EQ(steps, 1);
  EXPECT_EQ(all_reduces, 85);  // of its 91 collectives; the others, at start-up, gather and broadcast
}

TEST(ChromeExport, ReportsProgress) {
  TempDir dir;
  ASSERT_TRUE(testing::writeSampleTrace(dir.path("t.gpuscope")));
  Result<TraceReader> reader = TraceReader::open(dir.path("t.gpuscope"));
  ASSERT_TRUE(reader);
  int64_t last_done = -1, last_total = -1;
  ChromeExportOptions options;
  options.progress = [&](int64_t done, int64_t total) { last_done = done, last_total = total; };
  JsonWriter out;
  ASSERT_TRUE(writeChromeTrace(*reader, out, options));
  EXPECT_GT(last_total, 20);
  EXPECT_EQ(last_done, last_total);
}

}  // namespace
}  // namespace gpuscope
