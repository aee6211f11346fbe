// The plan a program runs with: read from GPUSCOPE_PLAN (or a path), asked by the program at each place it
// could apply a fix — "fuse these kernels?", "how many checkpoint segments?" — and a report of what was
// applied and what was not, with why. Fixes for PyTorch settings (precision, optimizer, data loader, CUDA
// graphs, attention, allocator) are the PyTorch bridge's; a CUDA C++ program reports them as not its own.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "formats/plan.h"
#include "formats/status.h"

namespace gpuscope::runtime {

class PlanRuntime {
 public:
  // GPUSCOPE_PLAN's plan; an empty plan (nothing to apply) when the variable is unset.
  static Result<PlanRuntime> fromEnvironment();
  static Result<PlanRuntime> fromFile(const std::string& path);
  explicit PlanRuntime(plan::Plan plan);

  // Whether the plan fuses this chain of kernels (names as recorded, in order); answering yes marks the
  // fix applied.
  bool shouldFuse(const std::vector<std::string>& kernels);
  // Whether the plan fuses a GEMM with the elementwise kernels after it (the GEMM's own kernel name is
  // cuBLAS's choice, so only the kernels after it are matched); marks the fix applied.
  bool shouldFuseAfterGemm(const std::vector<std::string>& elementwise);
  // Whether the plan fuses this chain, alone or after the kernel that produced its input (a convolution,
  // a GEMM), where the program applies it by moving the chain into that kernel's epilogue; marks it applied.
  bool shouldFuseIntoProducer(const std::vector<std::string>& chain);
  // The plan's checkpoint segments for a stack, if it checkpoints; marks the fix applied.
  std::optional<int64_t> checkpointSegments();

  const plan::Plan& plan() const { return plan_; }
  // One line per fix: "applied fusion-1 (fusion, 3 kernels)" or "not applied precision-1 (precision): …".
  std::string report() const;

 private:
  plan::Plan plan_;
  std::map<std::string, std::string> applied_;  // fix id → what was done
};

}  // namespace gpuscope::runtime
