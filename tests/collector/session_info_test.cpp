// The session row's facts that the collector asks of the process itself: here, the CUDA runtime's version, asked
// of the real libcudart once the process has loaded it, and never by loading one.
#include "collector/session_info.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

namespace gpuscope::collector {
namespace {

TEST(SessionInfo, TheRuntimesVersionIsAskedOfTheLibraryTheProcessLoaded) {
  ASSERT_FALSE(loadedRuntimeVersion()) << "this test binary must not link the CUDA runtime";
  void* runtime = dlopen(GPUSCOPE_CUDART, RTLD_NOW | RTLD_LOCAL);
  if (!runtime) GTEST_SKIP() << "no CUDA runtime library to load: " << dlerror();
  const std::optional<int64_t> version = loadedRuntimeVersion();
  ASSERT_TRUE(version);
  EXPECT_EQ(*version / 1000, 13);  // the toolkit this project builds with (CUDA 13.x)
  dlclose(runtime);
}

}  // namespace
}  // namespace gpuscope::collector
