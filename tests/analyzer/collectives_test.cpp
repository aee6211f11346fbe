// NCCL's operations joined to their kernels: on built 2-rank jobs whose collective rows sit as NCCL 2.28 writes
// them (just after the launch, on the launching thread), and on a trace where they come just before it.
#include "analyzer/collectives.h"

#include <gtest/gtest.h>

#include "formats/nccl_ops.h"
#include "formats/trace_import.h"
#include "tests/analyzer/load_for_test.h"
#include "tests/support/sample_trace.h"
#include "tests/support/trace_builder.h"

namespace gpuscope::analysis {
namespace {

using testing::TempDir;

TEST(Collectives, BusBandwidthAsNcclTestsDefinesIt) {
  EXPECT_DOUBLE_EQ(busFactor("AllReduce", 2), 1.0);
  EXPECT_DOUBLE_EQ(busFactor("AllReduce", 8), 1.75);
  EXPECT_DOUBLE_EQ(busFactor("AllGather", 4), 0.75);
  EXPECT_DOUBLE_EQ(busFactor("ReduceScatter", 2), 0.5);
  EXPECT_DOUBLE_EQ(busFactor("Broadcast", 8), 1.0);
  EXPECT_DOUBLE_EQ(busFactor("Send", 2), 0.0);
  EXPECT_EQ(ncclDatatypeBytes("ncclBfloat16"), 2);
  EXPECT_EQ(ncclDatatypeBytes("ncclFloat32"), 4);
  EXPECT_EQ(ncclDatatypeBytes("ncclInt8"), 1);
  EXPECT_EQ(ncclDatatypeBytes("something new"), 0);
  // torch.profiler's words and NCCL's (formats/nccl_ops.h), both ways.
  EXPECT_EQ(nccl::operationOfTorchName("_allgather_base"), "AllGather");
  EXPECT_EQ(nccl::operationOfTorchName("allreduce"), "AllReduce");
  EXPECT_EQ(nccl::torchNameOfOperation("AllGather"), "allgather");
  EXPECT_EQ(nccl::operationOfTorchName("barrier"), "");
  EXPECT_EQ(nccl::datatypeOfTorchType("BFloat16"), "ncclBfloat16");
  EXPECT_EQ(nccl::torchTypeOfDatatype("ncclFloat32"), "Float");
}

// Rank 1 is 300 µs late to each all-reduce (380 µs on rank 0, 80 µs on rank 1): each operation's time is the
// rank that arrived last's, 80 µs, on both ranks.
TEST(Collectives, EachOperationIsTimedByTheRankThatArrivedLast) {
  TempDir dir;
  const TraceData& t =
      loadForTest(testing::buildTwoRankJob(dir.dir(), {.late_ns = 300'000, .allreduce_bytes = 32 << 20}));
  const std::vector<CollectiveOp> ops = collectiveOps(t);
  ASSERT_EQ(ops.size(), 12u);
  for (const CollectiveOp& op : ops) {
    EXPECT_EQ(op.operation, "AllReduce");
    EXPECT_EQ(op.bytes, 32 << 20);
    EXPECT_EQ(op.ranks, 2);
    EXPECT_EQ(op.ranks_seen, 2);
    EXPECT_EQ(op.algorithm, "RING");
    EXPECT_EQ(op.protocol, "SIMPLE");
    EXPECT_EQ(op.channels, 4);
    EXPECT_TRUE(t.kernelName(op.kernel).starts_with("ncclDevKernel_AllReduce"));
    EXPECT_EQ(op.own_ns, t.sessions[op.session].rank == 0 ? 380'000 : 80'000);
    EXPECT_EQ(op.transfer_ns, 80'000);
    EXPECT_NEAR(op.busBytesPerSecond(), (32 << 20) / 80e-6, 1.0);
  }
  for (int32_t device = 0; device < static_cast<int32_t>(t.devices.size()); ++device) {
    const std::optional<GpuLink> link = nvlinkOf(t, device);
    ASSERT_TRUE(link);
    EXPECT_EQ(link->bytes_per_s_each_way, 424'980'000'000);
    EXPECT_EQ(link->links, 18);
  }
}

// An NCCL that hands operations to its profiler before the launch, and a group of two in one kernel: each row
// goes to the nearer launch on its thread, and the group's sizes add up.
TEST(Collectives, OperationsGoToTheNearestLaunchOfTheirThread) {
  TempDir dir;
  testing::TraceBuilder b(dir.path("t.gpuscope"));
  const char* nccl = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
  b.kernel(nccl, 20'000, 30'000, 9, 10'000).kernel(nccl, 220'000, 230'000, 9, 200'000);
  auto row = [&](int64_t t, int64_t sequence, int64_t count) {
    b.row(schema::CollectiveRow{1, 1, t, 5, 4, 1, 0, sequence, b.writer().intern("AllGather"), count,
                                b.writer().intern("ncclFloat32")});
  };
  row(9'800, 0, 1000);   // just before the first launch
  row(199'700, 1, 100);  // the second launch's group
  row(199'800, 2, 200);
  ASSERT_TRUE(b.finish());
  const TraceData& t = loadForTest(dir.path("t.gpuscope"));
  const std::vector<CollectiveOp> ops = collectiveOps(t);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].bytes, 1000 * 4 * 4);  // AllGather: the gathered buffer, 4 ranks' sends
  EXPECT_EQ(ops[1].bytes, 300 * 4 * 4);
  EXPECT_EQ(ops[1].sequence, 1);
  EXPECT_EQ(ops[0].ranks_seen, 1);
  EXPECT_FALSE(nvlinkOf(t, 0));  // no NVLink record: nothing to compare with
}

// The recorded sweeps (tests/fixtures/multirank/README.md): at 64 and 256 MiB the bus bandwidth from the trace is
// within 6 % of what the program timed itself in the same run (its timer also holds the launches between the
// kernels, which the trace leaves out; at 16 MiB those are a third of its time).
TEST(Collectives, RecordedSweepsGiveTheProgramsOwnBandwidth) {
  struct Expected {
    const char* trace;
    std::string_view operation;
    int64_t mib;
    double program_gb_per_s;
  };
  for (const Expected& e :
       {Expected{"sweep-on", "AllReduce", 64, 259.5}, Expected{"sweep-on", "AllReduce", 256, 297.2},
        Expected{"sweep-on", "AllGather", 256, 242.7}, Expected{"sweep-on", "ReduceScatter", 256, 235.2},
        Expected{"sweep-off", "AllReduce", 256, 26.7}, Expected{"sweep-off", "AllGather", 64, 24.6}}) {
    SCOPED_TRACE(std::string(e.trace) + " " + std::string(e.operation) + " " + std::to_string(e.mib));
    const TraceData& t = loadForTest(std::string(GPUSCOPE_NCCL_SWEEP) + "/" + e.trace + ".gpuscope");
    double bus_bytes = 0, seconds = 0;
    int64_t n = 0;
    for (const CollectiveOp& op : collectiveOps(t)) {
      if (op.operation != e.operation || op.bytes != e.mib << 20 || t.sessions[op.session].rank != 0) continue;
      EXPECT_EQ(op.ranks_seen, 2);
      bus_bytes += static_cast<double>(op.bytes) * busFactor(op.operation, op.ranks);
      seconds += static_cast<double>(op.transfer_ns) * 1e-9;
      ++n;
    }
    EXPECT_EQ(n, 23);  // 3 warm-up and 20 timed
    EXPECT_NEAR(bus_bytes / seconds / 1e9, e.program_gb_per_s, 0.06 * e.program_gb_per_s);
  }
  const TraceData& on = loadForTest(std::string(GPUSCOPE_NCCL_SWEEP) + "/sweep-on.gpuscope");
  ASSERT_TRUE(nvlinkOf(on, 0));
  EXPECT_EQ(nvlinkOf(on, 0)->bytes_per_s_each_way, 424'980'000'000);
  const TraceData& off = loadForTest(std::string(GPUSCOPE_NCCL_SWEEP) + "/sweep-off.gpuscope");
  bool disabled = false;
  for (int32_t s = 0; s < static_cast<int32_t>(off.sessions.size()); ++s) {
    disabled |= off.environmentValue(s, "NCCL_P2P_DISABLE") == "1";
  }
  EXPECT_TRUE(disabled);
}

// torch.profiler writes each NCCL kernel's collective into its args: imported (the real 2-rank DDP job of
// tests/fixtures/multirank), every all-reduce of both ranks is an operation with its size, matched across the
// ranks by its process group and order, on NCCL's 24 channels (the kernel's blocks).
TEST(Collectives, ImportedTorchProfilerTracesCarryTheirSizes) {
  TempDir dir;
  ASSERT_TRUE(importTrace(GPUSCOPE_MULTIRANK_TORCH_PROFILER, dir.path("job.gpuscope"), false));
  const TraceData& t = loadForTest(dir.path("job.gpuscope"));
  const std::vector<CollectiveOp> ops = collectiveOps(t);
  ASSERT_EQ(ops.size(), 140u);  // 70 NCCL kernels on each rank
  int64_t buckets = 0;
  for (const CollectiveOp& op : ops) {
    EXPECT_EQ(op.operation, "AllReduce");
    EXPECT_EQ(op.ranks, 2);
    EXPECT_EQ(op.ranks_seen, 2);
    EXPECT_EQ(op.channels, 24);
    EXPECT_EQ(op.bytes % 4, 0);  // fp32 gradients
    EXPECT_LE(op.transfer_ns, op.own_ns);
    buckets += op.bytes == 7'087'872 * 4;
  }
  EXPECT_GT(buckets, 40);  // DDP's 25 MiB buckets (27 MiB: a bucket closes past the cap)
}

}  // namespace
}  // namespace gpuscope::analysis
