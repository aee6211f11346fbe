#include "analyzer/memory_model.h"

#include <algorithm>
#include <cmath>

namespace gpuscope::analysis {

namespace {

constexpr int64_t kFp32Bytes = 4;
constexpr int kShardRanks = 8;  // the what-if shards optimizer state over this many GPUs

int64_t atPeak(const MemoryCategories& c, MemoryCategory category) {
  return c.usage[static_cast<size_t>(category)].at_device_peak_bytes;
}

// Activations made per steady iteration: with one per layer (as frameworks save them), the number of
// pieces checkpointing can drop.
int64_t activationsPerIteration(const MemoryAnalysis& memory, const MemoryCategories& c, const Iterations& it) {
  if (it.list.empty()) return 0;
  int64_t count = 0;
  for (size_t a = 0; a < memory.allocations.size(); ++a) {
    count += c.of_allocation[a] == MemoryCategory::kActivations;
  }
  return count / static_cast<int64_t>(it.list.size());
}

int64_t scaled(int64_t bytes, double factor) {
  return static_cast<int64_t>(std::llround(static_cast<double>(bytes) * factor));
}

void addWhatIfs(MemoryModel& m) {
  const MemoryModelTerms& t = m.terms;
  const int64_t peak = m.measured_peak_bytes;
  auto add = [&](std::string id, int64_t setting, std::string change, int64_t delta, std::string basis) {
    m.what_ifs.push_back(
        {std::move(id), setting, std::move(change), std::max<int64_t>(0, peak + delta), std::move(basis)});
  };
  add("bf16_activations", 0, "bf16 activations (autocast)", -t.activations / 2,
      "activations halve from fp32 to 16-bit; parameters, gradients and optimizer state stay fp32");
  if (m.layers >= 2) {
    const int64_t k = std::max<int64_t>(1, std::llround(std::sqrt(static_cast<double>(m.layers))));
    const double kept = static_cast<double>(k) / static_cast<double>(m.layers) + 1.0 / static_cast<double>(k);
    add("checkpointing", k, "activation checkpointing in " + std::to_string(k) + " segments",
        scaled(t.activations, std::min(1.0, kept)) - t.activations,
        std::to_string(m.layers) + " activations per iteration taken as layers of equal size: " + std::to_string(k) +
            " segment boundaries are kept and one segment is recomputed at a time (about one more forward pass of "
            "compute)");
  }
  add("optimizer_8bit", 0, "8-bit optimizer state", -scaled(t.optimizer_state, 0.75),
      "optimizer state from fp32 to 8-bit values, 4x smaller");
  add("optimizer_sharded", kShardRanks,
      "optimizer state sharded over " + std::to_string(kShardRanks) + " GPUs (ZeRO-1)",
      -scaled(t.optimizer_state, 1.0 - 1.0 / kShardRanks),
      "each GPU keeps 1/" + std::to_string(kShardRanks) + " of the optimizer state");
  add("batch_x2", 0, "batch size x2", t.activations, "activations grow with the batch; everything else stays");
  add("batch_half", 0, "batch size /2", -t.activations / 2, "activations shrink with the batch; everything else stays");
}

}  // namespace

MemoryModel fitMemoryModel(const MemoryAnalysis& memory, const MemoryCategories& categories,
                           const Iterations& iterations) {
  MemoryModel m;
  for (const DeviceMemory& d : memory.devices) m.measured_peak_bytes = std::max(m.measured_peak_bytes, d.peak_bytes);
  MemoryModelTerms& t = m.terms;
  t.parameters = atPeak(categories, MemoryCategory::kParameters);
  t.gradients = atPeak(categories, MemoryCategory::kGradients);
  t.activations = atPeak(categories, MemoryCategory::kActivations);
  t.optimizer_state = atPeak(categories, MemoryCategory::kOptimizerState);
  t.unexplained = atPeak(categories, MemoryCategory::kTemporaries) + atPeak(categories, MemoryCategory::kOther);
  // Every trained parameter has a gradient; memory kept from set-up also holds inputs and buffers. So P is
  // read from the gradients when there are any.
  m.parameter_count = (t.gradients > 0 ? t.gradients : t.parameters) / kFp32Bytes;
  if (m.parameter_count > 0) {
    m.optimizer_states_per_param =
        static_cast<double>(t.optimizer_state) / static_cast<double>(m.parameter_count * kFp32Bytes);
  }
  m.layers = activationsPerIteration(memory, categories, iterations);
  addWhatIfs(m);
  return m;
}

}  // namespace gpuscope::analysis
