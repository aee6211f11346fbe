// The job view of a multi-rank trace: on built 2-rank jobs with a known straggler (on one host, and on two
// hosts whose clocks differ), and on a real 2-rank DDP job recorded on 2 × H200
// (tests/fixtures/multirank/README.md).
#include "analyzer/job.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "formats/trace_import.h"
#include "formats/trace_merge.h"

#include "tests/analyzer/load_for_test.h"
#include "tests/support/sample_trace.h"
#include "tests/support/trace_builder.h"

namespace gpuscope::analysis {
namespace {

using testing::TempDir;
using testing::TraceBuilder;

constexpr const char* kGemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";
constexpr const char* kAllReduce = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

// Rank 1's host is 300 µs late to issue each step's GEMM (testing::buildTwoRankJob).
std::string builtJob(const TempDir& dir, const std::string& host1, int64_t skew_ns, const char* collective1) {
  return testing::buildTwoRankJob(dir.dir(),
                                  {.late_ns = 300'000, .host1 = host1, .skew_ns = skew_ns, .collective1 = collective1});
}

JobView jobOf(const std::string& path) {
  const TraceData& t = loadForTest(path);
  return analyzeJob(t, classifyConfigs(t), analyzeMemory(t, findIterations(t)));
}

TEST(Job, BuiltStragglerOnOneHost) {
  TempDir dir;
  const JobView job = jobOf(builtJob(dir, "host-a", 0, kAllReduce));
  ASSERT_EQ(job.ranks.size(), 2u);
  EXPECT_EQ(job.hosts, 1);
  EXPECT_EQ(job.collectives, 6);
  EXPECT_EQ(job.clock_residual_ns, 0);
  for (const RankStep& r : job.ranks) {
    SCOPED_TRACE(r.rank);
    EXPECT_EQ(r.steps, 5);
    EXPECT_EQ(r.step_ns, 1'000'000);
    EXPECT_EQ(r.compute_ns + r.comm_alone_ns + r.comm_overlapped_ns + r.copy_ns + r.idle_ns, r.step_ns);
    EXPECT_EQ(r.between_ns, 100'000);  // GPU idle from the step's end (its all-reduce's, at 900 µs) to the next step
  }
  EXPECT_EQ(job.ranks[0].comm_alone_ns, 380'000);  // of which 300 µs waiting for rank 1
  EXPECT_EQ(job.ranks[0].wait_ns, 300'000);
  EXPECT_EQ(job.ranks[1].wait_ns, 0);  // last at every collective: it waits for nobody
  EXPECT_EQ(job.ranks[1].comm_alone_ns, 80'000);
  EXPECT_EQ(job.ranks[1].idle_ns, 420'000);
  ASSERT_TRUE(job.straggler);
  const Straggler& s = *job.straggler;
  EXPECT_EQ(job.ranks[s.rank_index].rank, 1);
  EXPECT_DOUBLE_EQ(s.last_share, 1.0);
  EXPECT_EQ(s.late_ns, 300'000);  // per step, over the five timed steps (start to next start) and their collectives
  EXPECT_EQ(s.wait_ns, s.late_ns);
  EXPECT_EQ(s.cause, "its host work");
  EXPECT_EQ(s.cause_ns, 300'000);
  EXPECT_EQ(job.ranks[0].host_ns, 150'000);  // the step less its wait in cudaStreamSynchronize
  EXPECT_EQ(job.ranks[1].host_ns, 450'000);
  EXPECT_EQ(s.phase, Phase::kNoPhase);  // the trace names no phases
}

// Both hosts busy the whole step, rank 1's 300 µs behind: rank 0 still waits in every all-reduce, and its
// spinning all-reduce fills GPU time that is idle on rank 1, but neither host has more work than the other.
TEST(Job, RanksAPhaseApartHaveTheSameHostWork) {
  TempDir dir;
  const JobView job = jobOf(testing::buildTwoRankJob(dir.dir(), {.late_ns = 300'000, .hosts_busy = true}));
  ASSERT_EQ(job.ranks.size(), 2u);
  EXPECT_EQ(job.ranks[0].host_ns, 1'000'000);
  EXPECT_EQ(job.ranks[1].host_ns, 1'000'000);
  EXPECT_EQ(job.ranks[0].idle_ns + 300'000, job.ranks[1].idle_ns);
  ASSERT_TRUE(job.straggler);
  EXPECT_EQ(job.ranks[job.straggler->rank_index].rank, 1);
  EXPECT_EQ(job.straggler->late_ns, 300'000);
  EXPECT_EQ(job.straggler->cause, "");  // before: "its host work", read from the GPU's idle time
}

// Rank 1's 300 µs late each step spent in CUDA calls, no stretch of its own: a slower host at the same work.
TEST(Job, ASlowerHostAtTheSameCallsIsToldApart) {
  TempDir dir;
  const JobView job = jobOf(testing::buildTwoRankJob(dir.dir(), {.late_ns = 300'000, .late_in_calls = true}));
  ASSERT_TRUE(job.straggler);
  EXPECT_EQ(job.ranks[job.straggler->rank_index].rank, 1);
  EXPECT_EQ(job.ranks[1].host_ns - job.ranks[0].host_ns, 300'000);
  EXPECT_EQ(job.ranks[1].away_ns, job.ranks[0].away_ns);  // each step's last 100 µs, after the synchronize
  EXPECT_EQ(job.ranks[1].kernels, job.ranks[0].kernels);
  EXPECT_EQ(job.straggler->cause, "");
  EXPECT_EQ(job.straggler->spread_ns, 300'000);
}

// The ranks take turns at 300 µs more GEMM: each step's busiest rank has 150 µs more than the ranks' mean, and
// it changes from step to step (rank 0 the busiest in 3 of the 5 timed steps); no straggler.
TEST(Job, WorkThatDiffersStepByStep) {
  TempDir dir;
  const JobView job = jobOf(testing::buildTwoRankJob(dir.dir(), {.late_ns = 0, .alternating_extra_ns = 300'000}));
  ASSERT_EQ(job.ranks.size(), 2u);
  EXPECT_EQ(job.imbalance_ns, 150'000);
  EXPECT_EQ(job.ranks[job.busiest].rank, 0);
  EXPECT_DOUBLE_EQ(job.busiest_share, 0.6);
  TempDir even_dir;
  EXPECT_EQ(jobOf(testing::buildTwoRankJob(even_dir.dir(), {.late_ns = 0})).imbalance_ns, 0);
}

TEST(Job, ClocksOfTwoHostsAlignedOnTheCollectivesEnds) {
  TempDir dir;
  const JobView job = jobOf(builtJob(dir, "host-b", 5'000'000, kAllReduce));
  ASSERT_EQ(job.ranks.size(), 2u);
  EXPECT_EQ(job.hosts, 2);
  ASSERT_EQ(job.clock_offset_ns.size(), 2u);
  EXPECT_EQ(job.clock_offset_ns[0], 0);
  EXPECT_EQ(job.clock_offset_ns[1], -5'000'000);
  EXPECT_EQ(job.clock_residual_ns, 0);
  ASSERT_TRUE(job.straggler);
  EXPECT_EQ(job.ranks[job.straggler->rank_index].rank, 1);
  EXPECT_EQ(job.straggler->cause, "its host work");
}

TEST(Job, CollectivesThatDoNotMatchAreNotCompared) {
  const char* gather = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage)";
  TempDir dir;  // one host: no kernel of one name ends on both ranks at once
  const JobView job = jobOf(builtJob(dir, "host-a", 0, gather));
  ASSERT_EQ(job.ranks.size(), 2u);
  EXPECT_EQ(job.collectives, 0);
  EXPECT_NE(job.unmatched.find("no collective ends at the same moment"), std::string::npos) << job.unmatched;
  EXPECT_FALSE(job.straggler);
  TempDir two_hosts_dir;  // two hosts: matched by position, and the names differ
  const JobView apart = jobOf(builtJob(two_hosts_dir, "host-b", 5'000'000, gather));
  EXPECT_EQ(apart.collectives, 0);
  EXPECT_NE(apart.unmatched.find("differ in order or kind"), std::string::npos) << apart.unmatched;
  EXPECT_FALSE(apart.straggler);
}

// One host: a collective that one rank issued and the other did not (on a communicator of its own) is left out,
// and the collectives after it are still paired with their partners, not shifted by one.
TEST(Job, AnExtraCollectiveOnOneRankShiftsNothing) {
  TempDir dir;
  std::vector<std::string> traces;
  for (int rank = 0; rank < 2; ++rank) {
    traces.push_back(dir.path("rank" + std::to_string(rank) + ".gpuscope"));
    TraceBuilder b(traces.back(), rank, "host-a");
    if (rank == 0) b.kernel(kAllReduce, 100'000, 150'000, 9);  // only rank 0's
    for (int step = 0; step < 6; ++step) {
      const int64_t t = 1'000'000 + step * 1'000'000;
      b.nvtx("step", t, t + 50'000);
      b.kernel(kGemm, t + 10'000, t + 510'000, 7, t + 5'000);
      b.kernel(kAllReduce, t + 520'000 + (rank == 1 ? 100'000 : 0), t + 900'000, 9, t + 6'000);
    }
    ASSERT_TRUE(b.finish());
  }
  ASSERT_TRUE(mergeTraces(traces, dir.path("job.gpuscope"), {}));
  const JobView job = jobOf(dir.path("job.gpuscope"));
  EXPECT_EQ(job.collectives, 6);
  EXPECT_EQ(job.clock_residual_ns, 0);
  ASSERT_TRUE(job.straggler);
  EXPECT_EQ(job.ranks[job.straggler->rank_index].rank, 1);
  EXPECT_EQ(job.straggler->late_ns, 100'000);
}

TEST(Job, OneProcessIsNoJob) {
  TempDir dir;
  TraceBuilder b(dir.path("one.gpuscope"));
  b.kernel(kGemm, 10'000, 20'000).kernel(kAllReduce, 30'000, 40'000);
  ASSERT_TRUE(b.finish());
  EXPECT_TRUE(jobOf(dir.path("one.gpuscope")).ranks.empty());
}

// The real job: two ranks (the torchrun launcher, with no GPU work, is not one), 13 steps of 7 all-reduces.
// Rank 1's host is the slow one (see the fixture's README): it arrives last at every collective.
TEST(Job, RealTwoRankDdpJob) {
  const JobView job = jobOf(GPUSCOPE_MULTIRANK_TRACE);
  ASSERT_EQ(job.ranks.size(), 2u);
  EXPECT_EQ(job.ranks[0].rank, 0);
  EXPECT_EQ(job.ranks[1].rank, 1);
  EXPECT_EQ(job.hosts, 1);
  // Of each rank's 91 communication kernels, two are DDP's 4 µs buffer broadcasts whose sender finished before the
  // receiver arrived (a broadcast's root does not wait): their ends are apart, and they are left out.
  EXPECT_EQ(job.collectives, 89);
  EXPECT_TRUE(job.unmatched.empty());
  EXPECT_LT(job.clock_residual_ns, 100'000);  // the all-reduces end within 0.1 ms of each other
  for (const RankStep& r : job.ranks) {
    SCOPED_TRACE(r.rank);
    EXPECT_EQ(r.steps, 11);
    EXPECT_NEAR(r.step_ns, 33'780'000, 100'000);  // `advise` on rank 0 says 33.777 ms
    const int64_t parts = r.compute_ns + r.comm_alone_ns + r.comm_overlapped_ns + r.copy_ns + r.idle_ns;
    EXPECT_NEAR(parts, r.step_ns, r.step_ns / 20);  // the mean step against the median
    // Data parallel: both ranks hold the same tensors (the bridge's allocator events), 5.6 GiB at their peak.
    EXPECT_EQ(r.peak_bytes, 6'061'126'552);
  }
  EXPECT_EQ(job.step_ns, std::max(job.ranks[0].step_ns, job.ranks[1].step_ns));
  // Rank 0 waits in its all-reduces: far more communication alone than rank 1.
  EXPECT_GT(job.ranks[0].comm_alone_ns, 5 * job.ranks[1].comm_alone_ns);
  ASSERT_TRUE(job.straggler);
  const Straggler& s = *job.straggler;
  EXPECT_EQ(job.ranks[s.rank_index].rank, 1);
  EXPECT_GT(s.last_share, 0.9);
  EXPECT_GT(s.late_ns, 10'000'000);
  EXPECT_EQ(s.cause, "its host work");
  // Its stretches of code of its own fall after its optimizer step, before its next forward (its GPU's extra idle
  // time falls in the forward, which had been named).
  EXPECT_TRUE(s.own_code);
  EXPECT_EQ(s.phase, Phase::kAfter);
}

// The same job under torch.profiler, imported from its per-rank traces: no host names, so the clocks are
// aligned on the all-reduces' ends; rank 1 is still the one that arrives late.
TEST(Job, ImportedTorchProfilerTracesOfTheSameJob) {
  TempDir dir;
  ASSERT_TRUE(importTrace(GPUSCOPE_MULTIRANK_TORCH_PROFILER, dir.path("job.gpuscope"), false));
  const JobView job = jobOf(dir.path("job.gpuscope"));
  ASSERT_EQ(job.ranks.size(), 2u);
  EXPECT_EQ(job.hosts, 0);
  EXPECT_EQ(job.collectives, 70);
  ASSERT_EQ(job.clock_offset_ns.size(), 2u);
  EXPECT_LT(std::abs(job.clock_offset_ns[1]), 200'000);  // one host's clock after all
  EXPECT_LT(job.clock_residual_ns, 20'000);
  ASSERT_TRUE(job.straggler);
  EXPECT_EQ(job.ranks[job.straggler->rank_index].rank, 1);
  EXPECT_EQ(job.straggler->cause, "its host work");
}

}  // namespace
}  // namespace gpuscope::analysis
