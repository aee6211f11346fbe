// The checkpoint executor refuses segmentations that do not describe the stack, with one clear error,
// before it touches a GPU (its results on a real GPU: tests/gpu/checkpoint_executor_test.cpp).
#include "advisor/runtime/checkpoint_executor.h"

#include <gtest/gtest.h>

namespace gpuscope::runtime {
namespace {

class UnusedLayer : public CheckpointLayer {
 public:
  int64_t savedBytes() const override { return 16; }
  Status forward(CUdeviceptr, CUdeviceptr, CUdeviceptr, CUstream) override { return Status::ok(); }
  Status backward(CUdeviceptr, CUdeviceptr, CUdeviceptr, CUdeviceptr, CUstream) override { return Status::ok(); }
};

TEST(CheckpointExecutor, BadSegmentationsAreUsageErrors) {
  UnusedLayer a, b, c;
  const std::vector<CheckpointLayer*> stack{&a, &b, &c};
  for (const std::vector<size_t>& starts : std::vector<std::vector<size_t>>{{}, {1}, {0, 3}, {0, 2, 1}, {0, 1, 1}}) {
    Result<CheckpointExecutor> e = CheckpointExecutor::create(stack, 64, starts);
    ASSERT_FALSE(e);
    EXPECT_EQ(e.status().kind(), ErrorKind::kUsage);
    EXPECT_NE(e.status().message().find("segment starts"), std::string::npos) << e.status().message();
  }
  EXPECT_EQ(CheckpointExecutor::create({}, 64, {0}).status().kind(), ErrorKind::kUsage);
  EXPECT_EQ(CheckpointExecutor::create(stack, 0, {0}).status().kind(), ErrorKind::kUsage);
}

}  // namespace
}  // namespace gpuscope::runtime
