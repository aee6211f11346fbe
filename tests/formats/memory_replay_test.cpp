// Replaying allocations follows live allocations by address; frees of unknown memory change nothing.
#include <gtest/gtest.h>

#include "formats/memory_replay.h"
#include "tests/support/sample_trace.h"

namespace gpuscope {
namespace {

using namespace schema;

TEST(TensorReplay, DeltasFollowLiveAllocationsInTimeOrder) {
  testing::TempDir dir;
  {
    Result<TraceWriter> w = TraceWriter::create(dir.path("m.gpuscope"));
    ASSERT_TRUE(w);
    auto event = [](int64_t t, MemoryOp op, int64_t address, int64_t bytes) {
      return MemoryEventRow{1, 0, {}, {}, {}, t, op, MemoryKind::kDevice, address, bytes};
    };
    ASSERT_TRUE(w->append(event(30, MemoryOp::kRelease, 0x1000, 100)));  // written first, happened last
    ASSERT_TRUE(w->append(event(10, MemoryOp::kAllocation, 0x1000, 100)));
    ASSERT_TRUE(w->append(event(20, MemoryOp::kRelease, 0x9000, 500)));  // allocated before recording
    ASSERT_TRUE(w->append(event(25, MemoryOp::kAllocation, 0x2000, 40)));
    ASSERT_TRUE(w->finish());
  }
  Result<TraceReader> r = TraceReader::open(dir.path("m.gpuscope"));
  ASSERT_TRUE(r);
  std::vector<std::pair<int64_t, int64_t>> seen;  // (time, delta)
  ASSERT_TRUE(replayMemoryEvents(
      *r, [&](const MemoryEventRow& m, int64_t delta) { seen.emplace_back(m.timestamp_ns, delta); }));
  EXPECT_EQ(seen, (std::vector<std::pair<int64_t, int64_t>>{{10, 100}, {25, 40}, {30, -100}}));
}

}  // namespace
}  // namespace gpuscope
