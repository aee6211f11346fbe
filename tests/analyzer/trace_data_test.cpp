// Loading traces into columnar tables: every fixture loads whole, and odd traces load with the oddity
// repaired and said.
#include "analyzer/trace_data.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "formats/trace_reader.h"
#include "tests/support/sample_trace.h"
#include "tests/support/trace_builder.h"

namespace gpuscope::analysis {
namespace {

using testing::TempDir;
using testing::TraceBuilder;

int64_t sqlCount(const std::string& path, const std::string& table) {
  Result<TraceReader> r = TraceReader::open(path);
  return r ? r->database().queryInt("SELECT count(*) FROM " + table).value() : -1;
}

TEST(TraceData, EveryFixtureLoadsEveryRow) {
  for (const char* name : {"pytorch_gpt2_step.gpuscope", "jax_kernels.gpuscope", "multi_stream.gpuscope",
                           "nvtx_training.gpuscope", "torch_kernels.gpuscope"}) {
    SCOPED_TRACE(name);
    const std::string path = testing::fixturePath(name);
    Result<TraceData> t = loadTrace(path);
    ASSERT_TRUE(t) << t.status().message();
    EXPECT_EQ(static_cast<int64_t>(t->kernels.size()), sqlCount(path, "kernel") + sqlCount(path, "graph_launch"));
    EXPECT_EQ(static_cast<int64_t>(t->copies.size()), sqlCount(path, "memcpy"));
    EXPECT_EQ(static_cast<int64_t>(t->api_calls.size()), sqlCount(path, "api_call"));
    EXPECT_EQ(static_cast<int64_t>(t->nvtx.size()), sqlCount(path, "nvtx"));
    EXPECT_EQ(static_cast<int64_t>(t->memory.size()), sqlCount(path, "memory_event"));
    EXPECT_TRUE(std::is_sorted(t->kernels.start_ns.begin(), t->kernels.start_ns.end()));
    EXPECT_TRUE(t->load_warnings.empty());
    EXPECT_GT(t->durationNs(), 0);
  }
}

// `record --cuda-graph-trace graph` writes a graph's launches, not its kernels: each launch is GPU work named for
// its graph, with its graph id and its launch call, so busy time, idle time and steps count it.
TEST(TraceData, GraphsRecordedAsAWholeLoadAsWorkOfTheirOwnName) {
  TempDir dir;
  const std::string path = dir.path("sample.gpuscope");
  ASSERT_TRUE(testing::writeSampleTrace(path));
  Result<TraceData> t = loadTrace(path);
  ASSERT_TRUE(t) << t.status().message();
  std::vector<size_t> whole;
  for (size_t i = 0; i < t->kernels.size(); ++i) {
    if (t->kernelName(i) == "CUDA graph 3 (launched as a whole)") whole.push_back(i);
  }
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(t->kernels.graph_id[whole[0]], 3);
  EXPECT_EQ(t->kernels.end_ns[whole[0]] - t->kernels.start_ns[whole[0]], 15'000);
  EXPECT_NE(t->kernels.launch_call[whole[0]], kNone);
}

TEST(TraceData, ApiNamesLoseCuptiVersionSuffixes) {
  Result<TraceData> t = loadTrace(testing::fixturePath("pytorch_launch_loop.gpuscope"));
  ASSERT_TRUE(t);
  bool launch = false;
  for (int32_t name : t->api_calls.name) {
    EXPECT_EQ(t->text(name).find("_v"), std::string::npos) << t->text(name);
    launch = launch || t->text(name) == "cudaLaunchKernel";
  }
  EXPECT_TRUE(launch);
}

TEST(TraceData, EmptyTraceLoadsWithNothingInIt) {
  TempDir dir;
  ASSERT_TRUE(testing::writeEmptyTrace(dir.path("empty.gpuscope")));
  Result<TraceData> t = loadTrace(dir.path("empty.gpuscope"));
  ASSERT_TRUE(t) << t.status().message();
  EXPECT_EQ(t->eventCount(), 0u);
  EXPECT_EQ(t->durationNs(), 0);
}

TEST(TraceData, OutOfOrderEventsAreSortedAndBackwardsOnesClamped) {
  TempDir dir;
  TraceBuilder b(dir.path("odd.gpuscope"));
  b.kernel("k3", 30'000, 31'000).kernel("k1", 10'000, 11'000).kernel("backwards", 20'000, 19'000);
  ASSERT_TRUE(b.finish());
  Result<TraceData> t = loadTrace(dir.path("odd.gpuscope"));
  ASSERT_TRUE(t);
  ASSERT_EQ(t->kernels.size(), 3u);
  EXPECT_EQ(t->kernelName(0), "k1");
  EXPECT_EQ(t->kernelName(1), "backwards");
  EXPECT_EQ(t->kernels.end_ns[1], t->kernels.start_ns[1]);  // clamped to zero length
  EXPECT_EQ(t->kernelName(2), "k3");
  ASSERT_EQ(t->load_warnings.size(), 1u);
  EXPECT_NE(t->load_warnings[0].find("1 events ended before they started"), std::string::npos);
}

TEST(TraceData, EventsOnUndescribedDevicesGetPlaceholders) {
  TempDir dir;
  TraceBuilder b(dir.path("unknown.gpuscope"));
  schema::KernelRow k;
  k.session_id = 1;
  k.device_id = 5;   // the trace describes device 0 only
  k.config_id = 99;  // and no such configuration
  k.start_ns = 100;
  k.end_ns = 200;
  b.row(k);
  ASSERT_TRUE(b.finish());
  Result<TraceData> t = loadTrace(dir.path("unknown.gpuscope"));
  ASSERT_TRUE(t);
  ASSERT_EQ(t->devices.size(), 2u);
  EXPECT_EQ(t->devices[t->kernels.device[0]].name, "unknown device");
  EXPECT_EQ(t->kernelName(0), "");
  EXPECT_EQ(t->load_warnings.size(), 2u);
}

TEST(TraceData, UnreadableFilesFailWithTheReadersMessage) {
  Result<TraceData> t = loadTrace("/nonexistent/run.gpuscope");
  ASSERT_FALSE(t);
  EXPECT_NE(t.status().message().find("/nonexistent/run.gpuscope"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::analysis
