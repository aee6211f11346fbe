// Merging traces renumbers sessions and re-interns strings and kernel configurations consistently.
#include <gtest/gtest.h>

#include "formats/trace_merge.h"
#include "formats/trace_reader.h"
#include "tests/support/sample_trace.h"

namespace gpuscope {
namespace {

using namespace schema;
using testing::TempDir;

TEST(Merge, TwoProcessesKeepTheirRowsAndNames) {
  TempDir dir;
  ASSERT_TRUE(testing::writeSampleTrace(dir.path("a.gpuscope")));
  // A second process whose string and config ids differ from the first's.
  {
    Result<TraceWriter> w = TraceWriter::create(dir.path("b.gpuscope"));
    ASSERT_TRUE(w);
    ASSERT_TRUE(w->append(SessionRow{1, 777, 1, "node-2", "python other.py", 1, 0, 2, 50, 90, {}, {}, {}, "0.1.0"}));
    KernelConfigRow c;
    c.name = w->intern("only_in_b");
    ASSERT_TRUE(w->append(KernelRow{1, 0, 1, 7, 5, 60, 70, {}, {}, w->intern(c)}));
    c.name = w->intern("triton_poi_fused_add_mul_0");  // shared with a.gpuscope
    ASSERT_TRUE(w->append(KernelRow{1, 0, 1, 7, 6, 71, 80, {}, {}, w->intern(c)}));
    ASSERT_TRUE(w->finish());
  }
  ASSERT_TRUE(mergeTraces({dir.path("a.gpuscope"), dir.path("b.gpuscope")}, dir.path("m.gpuscope"), {}));
  Result<TraceReader> m = TraceReader::open(dir.path("m.gpuscope"));
  ASSERT_TRUE(m) << m.status().message();
  Result<std::vector<SessionRow>> sessions = m->readAll<SessionRow>();
  ASSERT_TRUE(sessions);
  ASSERT_EQ(sessions->size(), 2u);
  EXPECT_EQ((*sessions)[1].id, 2);
  EXPECT_EQ((*sessions)[1].pid, 777);
  EXPECT_EQ((*sessions)[1].rank, 1);

  // Every kernel of the second process names the right function through the merged tables.
  Result<sqlite::Statement> names =
      m->database().prepare("SELECT name_text FROM kernel_view WHERE session_id = 2 ORDER BY correlation_id");
  ASSERT_TRUE(names);
  std::vector<std::string> got;
  while (*names->step()) got.emplace_back(names->columnText(0));
  EXPECT_EQ(got, (std::vector<std::string>{"only_in_b", "triton_poi_fused_add_mul_0"}));
  Result<int64_t> distinct =
      m->database().queryInt("SELECT count(*) FROM string WHERE value = 'triton_poi_fused_add_mul_0'");
  ASSERT_TRUE(distinct);
  EXPECT_EQ(*distinct, 1);  // interned once across both inputs
  Result<int64_t> first_kernels = m->count<KernelRow>();
  ASSERT_TRUE(first_kernels);
  EXPECT_EQ(*first_kernels, 7);
}

TEST(Merge, BadInputFailsWithoutOutput) {
  TempDir dir;
  ASSERT_TRUE(testing::writeSampleTrace(dir.path("a.gpuscope")));
  testing::writeFile(dir.path("bad.gpuscope"), "not a trace");
  Status s = mergeTraces({dir.path("a.gpuscope"), dir.path("bad.gpuscope")}, dir.path("m.gpuscope"), {});
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find(dir.path("bad.gpuscope")), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir.path("m.gpuscope")));
}

}  // namespace
}  // namespace gpuscope

namespace gpuscope {
namespace {

TEST(Merge, WindowsKeepOnlyOverlappingEvents) {
  testing::TempDir dir;
  ASSERT_TRUE(testing::writeSampleTrace(dir.path("a.gpuscope")));
  constexpr int64_t kT0 = 1'763'800'000'000'000'000;  // the sample trace's start
  MergeOptions options;
  options.windows = {{kT0 + 400'000, kT0 + 1'000'000}};
  options.window_note = "only events inside the test window were kept";
  ASSERT_TRUE(mergeTraces({dir.path("a.gpuscope")}, dir.path("w.gpuscope"), options));
  Result<TraceReader> m = TraceReader::open(dir.path("w.gpuscope"));
  ASSERT_TRUE(m);
  // Two kernels inside, one reaching into it; the GPU work of no API call inside it runs outside it.
  EXPECT_EQ(*m->count<schema::KernelRow>(), 3);
  EXPECT_EQ(*m->count<schema::MemoryEventRow>(), 0);  // all before or after it
  EXPECT_EQ(*m->count<schema::SessionRow>(), 1);      // processes, devices and names are always kept
  EXPECT_EQ(*m->count<schema::DeviceRow>(), 1);
  EXPECT_EQ(*m->count<schema::DataQualityRow>(), 2);  // the sample's own note and the window's
  Result<int64_t> note = m->database().queryInt("SELECT count(*) FROM data_quality WHERE code = 'recording_window'");
  ASSERT_TRUE(note);
  EXPECT_EQ(*note, 1);
}

TEST(Merge, WindowsKeepTheGpuWorkOfApiCallsInsideThem) {
  testing::TempDir dir;
  ASSERT_TRUE(testing::writeSampleTrace(dir.path("a.gpuscope")));
  constexpr int64_t kT0 = 1'763'800'000'000'000'000;
  // Only the first launch (API call at 200-205 us) is inside; its kernel ran later, at 300-420 us.
  MergeOptions options;
  options.windows = {{kT0 + 199'000, kT0 + 205'500}};
  ASSERT_TRUE(mergeTraces({dir.path("a.gpuscope")}, dir.path("w.gpuscope"), options));
  Result<TraceReader> m = TraceReader::open(dir.path("w.gpuscope"));
  ASSERT_TRUE(m);
  Result<std::vector<schema::KernelRow>> kernels = m->readAll<schema::KernelRow>();
  ASSERT_TRUE(kernels);
  ASSERT_EQ(kernels->size(), 1u);
  EXPECT_EQ((*kernels)[0].correlation_id, 10);
}

TEST(Merge, NvtxRangeWindows) {
  testing::TempDir dir;
  ASSERT_TRUE(testing::writeSampleTrace(dir.path("a.gpuscope")));
  Result<std::vector<TimeWindow>> windows = nvtxRangeWindows({dir.path("a.gpuscope")}, "forward");
  ASSERT_TRUE(windows);
  ASSERT_EQ(windows->size(), 1u);
  EXPECT_EQ((*windows)[0].end_ns - (*windows)[0].start_ns, 810'000);
  Result<std::vector<TimeWindow>> none = nvtxRangeWindows({dir.path("a.gpuscope")}, "checkpoint");  // a mark
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace gpuscope
