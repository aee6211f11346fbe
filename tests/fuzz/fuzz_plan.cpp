// libFuzzer target: arbitrary bytes as plan.json for readPlan (`gpuscope apply`): a plan that follows
// formats/plan.schema.json, or one clear error; a plan read is written back and read again unchanged.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "formats/plan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/gpuscope-fuzz-plan-" + std::to_string(getpid()) + ".json";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  gpuscope::Result<gpuscope::plan::Plan> plan = gpuscope::plan::readPlan(path);
  if (!plan) return 0;
  const std::string written = gpuscope::plan::toJson(*plan);
  if (!gpuscope::plan::writePlan(*plan, path, true)) return 0;
  gpuscope::Result<gpuscope::plan::Plan> again = gpuscope::plan::readPlan(path);
  if (!again || gpuscope::plan::toJson(*again) != written) __builtin_trap();  // a round trip changes nothing
  return 0;
}
