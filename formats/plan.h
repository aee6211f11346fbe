// plan.json: the fixes `gpuscope advise --plan` proposes, in the form the bundled runtime and the PyTorch
// bridge apply them, with the step time and peak memory measured before and predicted after, so that a
// re-run can check the prediction. The schema is formats/plan.schema.json; readPlan() enforces it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "formats/json_writer.h"
#include "formats/status.h"

namespace gpuscope::plan {

inline constexpr int64_t kVersion = 1;
inline constexpr std::string_view kFormat = "gpuscope-plan";

// What a fix changes; the runtime applies each kind its own way (plan.schema.json lists the parameters).
inline constexpr std::string_view kFixKinds[] = {
    "fusion",        // fuse a recurring kernel chain (kernels: names in order)
    "cuda_graphs",   // capture the step into a CUDA graph (scope)
    "precision",     // run GEMMs and convolutions in lower precision (setting: bf16_autocast | tf32)
    "attention",     // written-out attention replaced by scaled-dot-product attention (setting: sdpa), or
                     // cuDNN's attention, which compiles for every new shape, switched off (no_cudnn_sdp)
    "optimizer",     // fused or multi-tensor optimizer step, or smaller optimizer state (setting)
    "checkpoint",    // activation checkpointing (segments)
    "allocator",     // allocator settings (setting: the value of variable, PYTORCH_CUDA_ALLOC_CONF or XLA's)
    "data_loader",   // input pipeline settings (num_workers, pin_memory, persistent_workers)
    "gemm_padding",  // GEMM shapes padded to tensor-core multiples (torch.compile's shape padding)
};
bool isFixKind(std::string_view kind);

// The environment variables an allocator fix may set (its "variable"; PyTorch's when absent).
inline constexpr std::string_view kAllocatorVariables[] = {
    "PYTORCH_CUDA_ALLOC_CONF",         // PyTorch's caching allocator
    "XLA_PYTHON_CLIENT_PREALLOCATE",   // XLA's reservation up front (JAX)
    "XLA_PYTHON_CLIENT_MEM_FRACTION",  // its share of the GPU
    "XLA_PYTHON_CLIENT_ALLOCATOR",     // XLA's allocator: bfc or platform
};
bool isAllocatorVariable(std::string_view name);

using Value = std::variant<bool, int64_t, double, std::string, std::vector<std::string>>;

struct Param {
  std::string key;
  Value value;
};

struct Fix {
  std::string id;    // unique within the plan: "fusion-1", "precision-1"
  std::string kind;  // one of kFixKinds
  std::string rule;  // the advisor rule that proposed it
  std::vector<Param> params;
  const Value* param(std::string_view key) const;
  std::string_view text(std::string_view key) const;  // a text parameter, or "" when absent or not text
};

struct Outcome {
  int64_t step_time_ns = 0;       // per iteration (per run when the trace has no iterations)
  int64_t peak_memory_bytes = 0;  // device memory, the device with the highest peak
};

struct Plan {
  std::string trace;       // the trace the plan was made from
  std::string step_basis;  // how the step was measured: "median of 7 steady iterations (NVTX 'step')"
  Outcome measured;
  Outcome predicted;
  std::string prediction_basis;
  std::vector<Fix> fixes;
};

std::string toJson(const Plan& plan);
// One fix as a JSON object (the advisor's JSON report embeds them).
void writeFix(JsonWriter& json, const Fix& fix);
// Writes the plan atomically (an existing file is replaced only by a complete one, and only with overwrite).
Status writePlan(const Plan& plan, const std::string& path, bool overwrite);
// Reads and checks a plan: one clear error for a file that is not a plan of this version or breaks the schema.
Result<Plan> readPlan(const std::string& path);

}  // namespace gpuscope::plan
