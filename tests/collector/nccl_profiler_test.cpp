// The NCCL profiler plugin, called as NCCL 2.28 calls a version-4 plugin: descriptors built as NCCL fills
// them, through the real functions the collector exports as ncclProfiler_v4.
#include "collector/nccl_profiler.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace gpuscope::collector {
namespace {

using namespace nccl;

int64_t fixedClock() { return 1234; }

TEST(NcclProfiler, KeepsCollectivesAndSendsOnlyWhileRecording) {
  setenv("NCCL_P2P_DISABLE", "1", 1);
  void* context = nullptr;
  int mask = 0;
  // Not recording (the collector did not start): NCCL is told to go on without the plugin.
  EXPECT_NE(init(&context, &mask, "comm", 0xabc, 1, 2, 1, nullptr), kNcclSuccess);
  collectiveLog().open(fixedClock);
  ASSERT_EQ(init(&context, &mask, "comm", 0xabc, 1, 2, 1, nullptr), kNcclSuccess);
  EXPECT_EQ(mask, kProfileColl | kProfileP2p);
  const Environment env = collectiveLog().takeEnvironment();  // read at the first communicator only
  EXPECT_NE(std::find(env.begin(), env.end(), std::pair<std::string, std::string>{"NCCL_P2P_DISABLE", "1"}), env.end());

  EventDescriptorV4 coll{};
  coll.type = kProfileColl;
  coll.rank = 1;
  coll.payload.coll = {7, "AllReduce", nullptr, nullptr, 1 << 20, 0, "ncclBfloat16", 24, 16, "RING", "LL128"};
  EventDescriptorV4 send{};
  send.type = kProfileP2p;
  send.payload.p2p = {"Send", nullptr, "ncclFloat32", 256, 0, 2};
  EventDescriptorV4 proxy{};
  proxy.type = 1 << 3;  // a proxy operation: not asked for, ignored
  void* handle = nullptr;
  for (EventDescriptorV4* d : {&coll, &send, &proxy}) {
    ASSERT_EQ(startEvent(context, &handle, d), kNcclSuccess);
    EXPECT_NE(handle, nullptr);
    EXPECT_EQ(stopEvent(handle), kNcclSuccess);
  }
  void* second = nullptr;
  ASSERT_EQ(init(&second, &mask, "comm2", 0xdef, 1, 2, 0, nullptr), kNcclSuccess);
  EXPECT_TRUE(collectiveLog().takeEnvironment().empty());

  const std::vector<CollectiveEvent> events = collectiveLog().take();
  ASSERT_EQ(events.size(), 2u);
  const CollectiveEvent& c = events[0];
  EXPECT_EQ(c.timestamp_ns, 1234);
  EXPECT_GT(c.thread_id, 0);
  EXPECT_EQ(c.communicator, 0xabc);
  EXPECT_EQ(c.ranks, 2);
  EXPECT_EQ(c.rank, 1);
  EXPECT_FALSE(c.point_to_point);
  EXPECT_EQ(c.sequence, 7);
  EXPECT_EQ(c.operation, "AllReduce");
  EXPECT_EQ(c.count, 1 << 20);
  EXPECT_EQ(c.datatype, "ncclBfloat16");
  EXPECT_EQ(c.channels, 24);
  EXPECT_EQ(c.algorithm, "RING");
  EXPECT_EQ(c.protocol, "LL128");
  const CollectiveEvent& s = events[1];
  EXPECT_TRUE(s.point_to_point);
  EXPECT_EQ(s.operation, "Send");
  EXPECT_EQ(s.peer_or_root, 0);
  EXPECT_EQ(s.count, 256);
  EXPECT_EQ(finalize(context), kNcclSuccess);
  EXPECT_EQ(finalize(second), kNcclSuccess);
}

TEST(NcclProfiler, EnvironmentKeepsWhatChangesBehaviourNotGpuscopesOwn) {
  setenv("NCCL_ALGO", "Ring", 1);
  setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True", 1);
  setenv("CUDA_INJECTION64_PATH", "/opt/gpuscope/lib/libgpuscope_collector.so", 1);
  setenv("UNRELATED_SETTING", "1", 1);
  const Environment all = interestingEnvironment();
  auto has = [&](const Environment& e, const std::string& name) {
    return std::find_if(e.begin(), e.end(), [&](const auto& v) { return v.first == name; }) != e.end();
  };
  EXPECT_TRUE(has(all, "NCCL_ALGO"));
  EXPECT_TRUE(has(all, "PYTORCH_CUDA_ALLOC_CONF"));
  EXPECT_FALSE(has(all, "CUDA_INJECTION64_PATH"));
  EXPECT_FALSE(has(all, "UNRELATED_SETTING"));
  const Environment nccl = interestingEnvironment("NCCL_");
  EXPECT_TRUE(has(nccl, "NCCL_ALGO"));
  EXPECT_FALSE(has(nccl, "PYTORCH_CUDA_ALLOC_CONF"));
}

}  // namespace
}  // namespace gpuscope::collector
