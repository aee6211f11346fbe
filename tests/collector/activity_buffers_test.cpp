#include "collector/activity_buffers.h"

#include <gtest/gtest.h>

#include <vector>

namespace gpuscope::collector {
namespace {

TEST(ActivityBuffers, KeepsSparesReadyForCuptisRequests) {
  ActivityBuffers pool;
  std::vector<ActivityBuffer> taken;
  for (size_t i = 0; i < ActivityBuffers::kPreallocated; ++i) taken.push_back(pool.acquire());
  for (ActivityBuffer b : taken) ASSERT_NE(b.data, nullptr);
  EXPECT_EQ(pool.freeBuffers(), 0u);

  pool.keepSpares();  // the writer thread's part: CUPTI's next requests take these instead of allocating
  EXPECT_EQ(pool.freeBuffers(), ActivityBuffers::kSpares);
  pool.keepSpares();
  EXPECT_EQ(pool.freeBuffers(), ActivityBuffers::kSpares);

  ActivityBuffer spare = pool.acquire();
  ASSERT_NE(spare.data, nullptr);
  ASSERT_EQ(spare.bytes, pool.limits().large_bytes);
  EXPECT_EQ(spare.data[0], 0);  // its pages were touched (zeroed) when it was made, not while CUPTI fills it
  EXPECT_EQ(spare.data[spare.bytes - 1], 0);
  spare.data[spare.bytes - 1] = 1;  // the whole buffer is ours to write

  for (ActivityBuffer b : taken) pool.release(b);
  pool.release(spare);
  EXPECT_EQ(pool.freeBuffers(), ActivityBuffers::kPreallocated + ActivityBuffers::kSpares);
  EXPECT_EQ(pool.buffersRefused(), 0);
}

// CUPTI is told its buffers come zeroed, so a buffer it filled must be clear when it is handed out again.
TEST(ActivityBuffers, AReleasedBufferComesBackZeroed) {
  ActivityBuffers pool({.large_bytes = 64 << 10, .large_buffers = 1, .small_bytes = 16 << 10, .max_bytes = 64 << 10});
  ActivityBuffer b = pool.acquire();
  ASSERT_NE(b.data, nullptr);
  for (size_t i = 0; i < b.bytes; i += 4093) b.data[i] = 0xab;
  b.data[b.bytes - 1] = 0xcd;
  pool.release(b);

  ActivityBuffer again = pool.acquire();
  ASSERT_EQ(again.data, b.data);  // the only buffer the limits allow
  size_t nonzero = 0;
  for (size_t i = 0; i < again.bytes; ++i) nonzero += again.data[i] != 0;
  EXPECT_EQ(nonzero, 0u);
  pool.release(again);
}

// Per-thread buffers: a program with many CUDA threads (a JAX program had 142) each holding one. Past the large
// buffers the pool hands out small ones, up to the same total, before it refuses.
TEST(ActivityBuffers, ManyThreadsGetSmallBuffersBeforeAnyIsRefused) {
  const ActivityBufferLimits limits{
      .large_bytes = 256 << 10, .large_buffers = 4, .small_bytes = 32 << 10, .max_bytes = 2 << 20};
  ActivityBuffers pool(limits);
  std::vector<ActivityBuffer> held;
  size_t large = 0, small = 0, bytes = 0;
  for (;;) {
    ActivityBuffer b = pool.acquire();
    if (!b.data) break;
    held.push_back(b);
    bytes += b.bytes;
    (b.bytes == limits.large_bytes ? large : small) += 1;
  }
  EXPECT_EQ(large, limits.large_buffers);
  EXPECT_EQ(small, (limits.max_bytes - limits.large_buffers * limits.large_bytes) / limits.small_bytes);
  EXPECT_EQ(bytes, limits.max_bytes);
  EXPECT_EQ(pool.buffersRefused(), 1);

  pool.keepSpares();  // nothing more to make at the limit
  EXPECT_EQ(pool.freeBuffers(), 0u);
  pool.release(held.back());  // a small one comes free and is handed out again
  EXPECT_EQ(pool.acquire().bytes, limits.small_bytes);
  held.pop_back();
  for (ActivityBuffer b : held) pool.release(b);
}

// The defaults leave room for every thread of a program like that one, with the busiest on large buffers.
TEST(ActivityBuffers, TheDefaultsHoldABufferForHundredsOfThreads) {
  const ActivityBufferLimits d;
  const size_t small = (d.max_bytes - d.large_buffers * d.large_bytes) / d.small_bytes;
  EXPECT_GE(d.large_buffers + small, 512u);
  EXPECT_EQ(d.max_bytes, size_t{512} << 20);
}

}  // namespace
}  // namespace gpuscope::collector
