// The one kernel classifier of gpuscope: what kind of work a kernel does, read from its name, for kernels
// of PyTorch, cuBLAS/cuBLASLt, cuDNN, CUTLASS, FlashAttention, Triton, XLA, NCCL, CuPy and plain CUDA.
// Stats, the fusable-chain finder and the advisor all use it, so a kernel is the same kind everywhere.
#pragma once

#include <string_view>
#include <vector>

namespace gpuscope::analysis {

enum class KernelClass {
  kElementwise,    // pointwise maths, casts inside arithmetic, fills, dropout, random numbers
  kReduction,      // sums, max/min, arg-reductions, losses that reduce
  kNormalization,  // layer/batch/group/RMS norm, softmax
  kGemm,           // matrix multiplies (cuBLAS, cuBLASLt nvjet, CUTLASS, Triton/XLA GEMM fusions)
  kConvolution,    // convolutions (cuDNN implicit GEMM, Winograd, FFT; CUTLASS conv)
  kAttention,      // fused attention (FlashAttention, cuDNN SDPA, memory-efficient attention)
  kOptimizer,      // multi-tensor optimizer and foreach kernels
  kCopy,           // data movement: copies, casts by copy, transposes, concatenation, layout changes
  kCommunication,  // collectives and peer-to-peer (NCCL, NVSHMEM, custom all-reduce)
  kOther,          // everything else: sorting, scans, indexing, framework bookkeeping
};
inline constexpr int kKernelClassCount = 10;

// Input precision of a GEMM, convolution or attention kernel, when the name says it.
enum class Precision { kUnknown, kFp64, kFp32, kTf32, kBf16, kFp16, kFp8, kInt8 };

struct KernelKind {
  KernelClass cls = KernelClass::kOther;
  Precision precision = Precision::kUnknown;
  // A step inside one library call (cuDNN's layout transforms around its NHWC convolution kernels, its RNN's
  // pointwise and dropout kernels): the library runs it for its own algorithm, so no compiler or plan outside the
  // library fuses it away.
  bool inside_library = false;
  // Of those, cuDNN's layout transforms between NCHW and NHWC (nchwToNhwc, nhwcToNchw).
  bool layout_transform = false;
  // PyTorch's eager gathers and scatters (index_select, gather, scatter_add): a compiler folds their indexed
  // loads and stores into the kernels around them. Their class stays other (indexing).
  bool indexed_access = false;
  // A CUDA graph launch recorded as a whole (analyzer/kernel_names.h's wholeGraphName): what ran inside is unknown.
  bool whole_graph = false;
  // A GEMM or convolution in full fp32: FFMA/SIMT kernels, off the tensor cores.
  bool onCudaCores() const {
    return (cls == KernelClass::kGemm || cls == KernelClass::kConvolution) && precision == Precision::kFp32;
  }
  // Memory-bound classes, whose back-to-back runs are what fusion removes.
  bool memoryBound() const {
    return cls == KernelClass::kElementwise || cls == KernelClass::kReduction || cls == KernelClass::kNormalization;
  }
  // Work a fused kernel absorbs: the memory-bound classes, copy kernels (dtype casts, concatenations,
  // transposes) and eager gathers and scatters, which a compiler folds into the loads and stores around them.
  bool fusable() const { return !inside_library && (memoryBound() || cls == KernelClass::kCopy || indexed_access); }
};

KernelKind classifyKernel(std::string_view name);

struct TraceData;
// The kind of every kernel configuration of a trace (index: TraceData::configs), each name classified once.
std::vector<KernelKind> classifyConfigs(const TraceData& trace);

std::string_view toString(KernelClass cls);      // "elementwise", "gemm", … (stable: used in JSON)
std::string_view toString(Precision precision);  // "fp32", "tf32", "bf16", … or "" when unknown

}  // namespace gpuscope::analysis
