#include "collector/activity_buffers.h"

#include <gtest/gtest.h>

#include <vector>

namespace gpuscope::collector {
namespace {

TEST(ActivityBuffers, KeepsSparesReadyForCuptisRequests) {
  ActivityBuffers pool;
  std::vector<uint8_t*> taken;
  for (size_t i = 0; i < ActivityBuffers::kPreallocated; ++i) taken.push_back(pool.acquire());
  for (uint8_t* b : taken) ASSERT_NE(b, nullptr);
  EXPECT_EQ(pool.freeBuffers(), 0u);

  pool.keepSpares();  // the writer thread's part: CUPTI's next requests take these instead of allocating
  EXPECT_EQ(pool.freeBuffers(), ActivityBuffers::kSpares);
  pool.keepSpares();
  EXPECT_EQ(pool.freeBuffers(), ActivityBuffers::kSpares);

  uint8_t* spare = pool.acquire();
  ASSERT_NE(spare, nullptr);
  EXPECT_EQ(spare[0], 0);  // its pages were touched (zeroed) when it was made, not while CUPTI fills it
  EXPECT_EQ(spare[ActivityBuffers::kBufferBytes - 1], 0);
  spare[ActivityBuffers::kBufferBytes - 1] = 1;  // the whole buffer is ours to write

  for (uint8_t* b : taken) pool.release(b);
  pool.release(spare);
  EXPECT_EQ(pool.freeBuffers(), ActivityBuffers::kPreallocated + ActivityBuffers::kSpares);
  EXPECT_EQ(pool.buffersRefused(), 0);
}

}  // namespace
}  // namespace gpuscope::collector
