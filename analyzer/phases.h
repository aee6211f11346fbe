// The phases of a training step — forward, backward, optimizer — told from the names of NVTX ranges
// ("forward", "fwd", "backward", "bwd", "optimizer", "optim.step"). Memory categories and the advisor's
// rules both judge by them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analyzer/intervals.h"
#include "analyzer/trace_data.h"

namespace gpuscope::analysis {

enum class Phase { kNoPhase, kSetup, kForward, kBackward, kOptimizer, kAfter };

Phase phaseOfName(std::string name);  // kForward, kBackward, kOptimizer or kNoPhase

// The PyTorch bridge's module ranges: "<qualified module name> (forward)" and "… (backward)".
bool isModuleRange(std::string_view name);
// The range the bridge puts around each batch a torch.utils.data.DataLoader hands out (its iterator's __next__):
// without workers the loading itself, with them the main thread's wait for a batch.
inline constexpr std::string_view kDataLoaderRange = "DataLoader.__next__";
// Any range the bridge adds: module ranges, "optimizer.step (<optimizer class>)" and kDataLoaderRange.
bool isBridgeRange(std::string_view name);
// The NVTX mark the bridge puts where it removed its module hooks (gpuscope record --torch-steps): steps
// before it carry module ranges, steps after it run at the program's own speed.
inline constexpr std::string_view kHooksRemovedMark = "gpuscope: module hooks removed";
// The NVTX mark the bridge puts, under `gpuscope apply --record`, where its timing check of the fixes ended:
// the steps before it ran compiling, and some as the script wrote them; the steps after it are the program
// as applied.
inline constexpr std::string_view kApplyCheckDoneMark = "gpuscope: apply check done";
// The NVTX mark the bridge puts, under `gpuscope apply --record`, where its timing check switched the fixes off to
// run the model as the script wrote it, up to kApplyCheckDoneMark: gpuscope's own calls, neither the program as
// written nor as applied, which no step and no peak of the run with the plan is taken from.
inline constexpr std::string_view kApplyAsWrittenMark = "gpuscope: apply check runs the model as written";
// The NVTX mark the bridge puts, followed by a root module's name, where that module's forward was handed memory
// its previous call returned (an RNN's hidden state fed back, a cache): a replay of CUDA graphs would overwrite it.
inline constexpr std::string_view kStateCarriedMark = "gpuscope: state carried into ";
// Ranges a library adds on its own, whatever the program does: XLA's runtime ("Thunk:#hlo_op=…#",
// "XlaModule:#hlo_module=…#", "XlaEmitGpuAsm:#…#"), one per thunk or executable dispatched, and every range in
// a library's own NVTX domain (CUB's and Thrust's "CCCL": "cub::DeviceRadixSort", one per algorithm call;
// NCCL's). They time a call, not the program's step, so they are no iteration marker and no phase.
bool isLibraryRange(std::string_view name, std::string_view domain);
// XLA's compiles, as it annotates them: its NVTX ranges "XlaCompile:#module=…#" of process `session`, merged.
// Its autotuner compiles, runs and times candidate kernels on a pool of threads inside them: work of the
// compiler, not of the program (a Flax classifier's: 17,429 of its 26,467 kernels and 11,103 of its 11,134
// synchronisations, H200, 2026-11-29).
std::vector<Interval> annotatedCompiles(const TraceData& trace, int32_t session);
// Per API call, whether it is made inside its process's annotatedCompiles.
std::vector<bool> callsInCompiles(const TraceData& trace);
// The module a module range names ("GPT2LMHeadModel.transformer.h.0"), and its pass in `phase`.
std::string moduleOfRange(std::string_view name, Phase& phase);

struct PhaseRange {
  int64_t start = 0, end = 0;  // host time of the NVTX range
  Phase phase = Phase::kNoPhase;
};

// The NVTX ranges of one process (index into trace.sessions) that name a phase, in start order; a range inside
// (or overlapping) an earlier one of the same phase is merged into it, so each span of a phase is one range.
std::vector<PhaseRange> phaseRanges(const TraceData& trace, int32_t session);

}  // namespace gpuscope::analysis
