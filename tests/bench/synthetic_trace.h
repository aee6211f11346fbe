// Synthetic traces of a chosen size for benchmarks: launch-bound training-step-like sequences of
// API calls and kernels with realistic names and timings.
#pragma once

#include <cstdint>

#include "formats/trace_writer.h"

namespace gpuscope::bench {

// config_id is the kernel_config row (one per kernel name in these traces).
inline schema::KernelRow syntheticKernel(int64_t i, int64_t config_id) {
  return {1, 0, 1, 7 + i % 4, i, 1'000'000 + i * 2'000, 1'000'000 + i * 2'000 + 1'500, {}, {}, config_id};
}

inline schema::ApiCallRow syntheticApiCall(int64_t i, schema::StringId name) {
  return {1, schema::ApiKind::kRuntime, name, 211, 4242, 1'000'000 + i * 2'000 - 900, 1'000'000 + i * 2'000 - 100, i,
          0};
}

// Writes `launches` kernel launches (an API call and a kernel each) with 64 distinct kernel names.
inline Status writeSyntheticRows(TraceWriter& w, int64_t launches) {
  int64_t configs[64];
  for (int i = 0; i < 64; ++i) {
    schema::KernelConfigRow c;
    c.name = w.intern("void at::native::elementwise_kernel<" + std::to_string(i) + ">()");
    c.grid_x = 1024, c.grid_y = 1, c.grid_z = 1, c.block_x = 256, c.block_y = 1, c.block_z = 1;
    c.registers_per_thread = 32;
    configs[i] = w.intern(c);
  }
  const schema::StringId launch = w.intern("cudaLaunchKernel");
  GPUSCOPE_RETURN_IF_ERROR(
      w.append(schema::SessionRow{1, 4242, 1, "bench", "bench", {}, {}, {}, 0, {}, {}, {}, {}, "0"}));
  for (int64_t i = 0; i < launches; ++i) {
    GPUSCOPE_RETURN_IF_ERROR(w.append(syntheticApiCall(i, launch)));
    GPUSCOPE_RETURN_IF_ERROR(w.append(syntheticKernel(i, configs[i % 64])));
  }
  return Status::ok();
}

}  // namespace gpuscope::bench
