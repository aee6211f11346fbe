// Memory what-ifs replayed on a recorded PyTorch run: the tensors the PyTorch bridge recorded, with each
// repeated block of the model (an item of a ModuleList or Sequential: a transformer's layers, a ResNet's
// bottlenecks) checkpointed, activations in bf16, or a compiler's fused intermediates gone, give the peak
// the run would have had. Replaying the real timeline, rather than subtracting at the old peak, follows the
// peak where a change moves it (late in the backward pass, where the gradients have grown).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "analyzer/memory_categories.h"
#include "analyzer/memory_timeline.h"
#include "analyzer/trace_data.h"

namespace gpuscope::analysis {

// "ResNet.layer1.0" for a module "ResNet.layer1.0.downsample.1": the outermost item of a ModuleList or
// Sequential (a path component that is a number) the module lies in; "" when it lies in none.
std::string blockOf(const std::string& module);

// What-ifs replayed on the tensors' timeline.
struct MemoryChanges {
  bool checkpoint_blocks = false;  // each repeated block checkpointed
  double activation_scale = 1.0;   // activations' bytes scaled: 0.5 for bf16 autocast of an fp32 model
  bool drop_temporaries = false;   // temporaries living inside a run of fusable kernels go: compiled, on chip
};

struct TensorReplay {
  int64_t blocks = 0;      // distinct repeated blocks checkpointed (0: fewer than two found, none)
  int64_t peak_bytes = 0;  // the peak device's peak after the changes
};

// Checkpointing: each activation a block's forward made lives only until that forward ends, and again from
// the start of the block's backward (its recomputation) to its recorded free; the block's last activation
// (its output, the next block's input) is kept as recorded. Nothing when the trace has no tensors.
std::optional<TensorReplay> replayTensors(const TraceData& trace, const MemoryAnalysis& memory,
                                          const MemoryCategories& categories, const MemoryChanges& changes);

}  // namespace gpuscope::analysis
