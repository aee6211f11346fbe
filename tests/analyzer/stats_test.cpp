// gpuscope stats' numbers: on the fixtures, against what each sample program knows it did; on small built
// traces, against values worked out by hand.
#include "analyzer/stats.h"

#include <gtest/gtest.h>

#include "tests/analyzer/load_for_test.h"
#include "tests/support/sample_trace.h"
#include "tests/support/trace_builder.h"

namespace gpuscope::analysis {
namespace {

using schema::CopyKind;
using schema::MemoryKind;
using testing::TempDir;
using testing::TraceBuilder;

Stats statsOf(const std::string& path) { return computeStats(loadForTest(path)); }

const TransferSummary* findTransfer(const Stats& s, const std::string& operation, const std::string& memory) {
  for (const TransferSummary& t : s.transfers) {
    if (t.operation == operation && t.memory == memory) return &t;
  }
  return nullptr;
}

TEST(Stats, ElementwiseChainShowsItsFourKernelsAndCopies) {
  const Stats s = statsOf(testing::fixturePath("elementwise_chain.gpuscope"));
  ASSERT_EQ(s.kernels.size(), 4u);
  for (const KernelNameSummary& k : s.kernels) {
    EXPECT_EQ(k.time.count, 50) << k.name;
    EXPECT_EQ(k.kind.cls, KernelClass::kElementwise) << k.name;
    EXPECT_LE(k.time.min, k.time.median);
    EXPECT_LE(k.time.median, k.time.max);
  }
  double shares = 0;
  for (const KernelNameSummary& k : s.kernels) shares += k.share_of_gpu;
  EXPECT_NEAR(shares, 1.0, 1e-9);
  const TransferSummary* up = findTransfer(s, "memcpy HtoD", "pageable -> device");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->time.count, 50);
  EXPECT_EQ(up->bytes.total, 50LL * 64 * 1024 * 1024);
  EXPECT_GT(up->bandwidth_bytes_per_s, 1e9);  // pageable copies on an H100 host: several GB/s
}

TEST(Stats, PageableAndPinnedCopiesAreToldApart) {
  const Stats pageable = statsOf(testing::fixturePath("pageable_sync.gpuscope"));
  const TransferSummary* slow = findTransfer(pageable, "memcpy HtoD", "pageable -> device");
  ASSERT_NE(slow, nullptr);
  EXPECT_EQ(slow->time.count, 40);
  const Stats pinned = statsOf(testing::fixturePath("multi_stream.gpuscope"));
  const TransferSummary* fast = findTransfer(pinned, "memcpy HtoD", "pinned -> device");
  ASSERT_NE(fast, nullptr);
  EXPECT_EQ(fast->time.count, 32);
  EXPECT_GT(fast->bandwidth_bytes_per_s, 3 * slow->bandwidth_bytes_per_s);
}

TEST(Stats, MultiStreamUsesFourStreamsAndBusyIsAUnion) {
  const Stats s = statsOf(testing::fixturePath("multi_stream.gpuscope"));
  int streams_with_kernels = 0;
  for (const StreamUsage& u : s.streams) streams_with_kernels += u.kernels > 0;
  EXPECT_EQ(streams_with_kernels, 4);
  ASSERT_EQ(s.devices.size(), 1u);
  const DeviceUsage& d = s.devices[0];
  EXPECT_EQ(d.kernels, 32);
  EXPECT_EQ(d.copies, 64);
  // Copies and kernels overlap across streams, so the union is less than the parts added up.
  EXPECT_LT(d.busy_ns, d.kernel_busy_ns + d.copy_busy_ns);
  EXPECT_LE(d.busy_ns, d.windowNs());
  EXPECT_EQ(s.summary.gpu_busy_ns, d.busy_ns);
}

TEST(Stats, GptStepHasGemmsAttentionAndNvtxSteps) {
  const Stats s = statsOf(testing::fixturePath("pytorch_gpt2_step.gpuscope"));
  bool bf16_gemm = false;
  for (const KernelClassSummary& c : s.kernel_classes) {
    bf16_gemm = bf16_gemm || (c.cls == KernelClass::kGemm && c.precision == Precision::kBf16 && c.time.count > 0);
  }
  EXPECT_TRUE(bf16_gemm);
  bool steps = false;
  for (const NvtxSummary& n : s.nvtx_ranges) steps = steps || (n.name == "step" && n.time.count == 5);
  EXPECT_TRUE(steps);
  EXPECT_EQ(s.summary.kernel_count, 6222);
  EXPECT_GT(s.summary.duration_ns, s.devices[0].windowNs() - 1);
}

TEST(Stats, HandWorkedTrace) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  // Two kernels overlap on two streams (1,000-3,000 and 2,000-6,000 ns), a third runs alone later.
  b.kernel("a", 1'000, 3'000, 7).kernel("b", 2'000, 6'000, 8).kernel("a", 10'000, 11'000, 7);
  b.copy(CopyKind::kHostToDevice, MemoryKind::kPinned, 1'000'000, 20'000, 21'000);
  ASSERT_TRUE(b.finish());
  const Stats s = statsOf(dir.path("t.gpuscope"));
  EXPECT_EQ(s.summary.kernel_count, 3);
  EXPECT_EQ(s.summary.kernel_time_ns, 2'000 + 4'000 + 1'000);
  EXPECT_EQ(s.summary.gpu_busy_ns, 5'000 + 1'000 + 1'000);  // union: 1,000-6,000, 10,000-11,000, the copy
  ASSERT_EQ(s.kernels.size(), 2u);
  EXPECT_EQ(s.kernels[0].name, "b");  // longest total first
  EXPECT_EQ(s.kernels[1].time.count, 2);
  EXPECT_EQ(s.kernels[1].time.median, 1'000);  // the lower middle of {1,000, 2,000}
  EXPECT_EQ(s.kernels[1].time.max, 2'000);
  ASSERT_EQ(s.transfers.size(), 1u);
  EXPECT_DOUBLE_EQ(s.transfers[0].bandwidth_bytes_per_s, 1e12);  // 1 MB in 1 µs
  EXPECT_EQ(s.devices[0].windowNs(), 20'000);
  EXPECT_EQ(s.api_calls.size(), 2u);  // cudaLaunchKernel and cudaMemcpyAsync
}

TEST(Stats, EmptyTraceGivesZeros) {
  TempDir dir;
  ASSERT_TRUE(testing::writeEmptyTrace(dir.path("e.gpuscope")));
  const Stats s = statsOf(dir.path("e.gpuscope"));
  EXPECT_EQ(s.summary.kernel_count, 0);
  EXPECT_EQ(s.summary.gpu_busy_ns, 0);
  EXPECT_TRUE(s.kernels.empty());
  ASSERT_EQ(s.devices.size(), 1u);
  EXPECT_EQ(s.devices[0].busyShare(), 0.0);
}

}  // namespace
}  // namespace gpuscope::analysis
