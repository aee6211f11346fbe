// CUDA source for one fused elementwise chain: a module with two kernels, one that moves 16 bytes per load
// and store (4 fp32 or 8 bf16/fp16 values) for aligned data, and a scalar one for the tail and for
// unaligned pointers. All arithmetic is in fp32; bf16 and fp16 are converted on load and store without
// CUDA's headers, so NVRTC needs no include path on the machine that runs it.
#pragma once

#include <string>
#include <string_view>

#include "advisor/runtime/elementwise_expr.h"

namespace gpuscope::runtime {

enum class DType { kF32, kBF16, kF16 };
std::string_view toString(DType dtype);  // "fp32", "bf16", "fp16"
bool parseDType(std::string_view text, DType& out);
int elementBytes(DType dtype);
int vectorWidth(DType dtype);  // elements per 16-byte vector

inline constexpr std::string_view kVectorKernel = "gpuscope_fused_vec";
// Arguments: inputs..., output, number of vectors. Each thread loads vectorsPerThread() vectors of every
// input before it computes, and the grid should cover all vectors: a grid-stride loop over a grid sized to
// the device makes each thread wait for its load, compute, then load again, which cost one-input chains
// 12 % of the bandwidth on an H100 (docs/benchmarks.md).
int vectorsPerThread(const ParsedExpr& expr);
inline constexpr std::string_view kScalarKernel = "gpuscope_fused_scalar";
// Arguments: inputs..., output, first element, number of elements.
inline constexpr std::string_view kRowsKernel = "gpuscope_fused_rows";
// The chain reduced along rows: out[r] = reduce over c of chain(in[r·cols + c]), one block per row, fp32
// accumulation. Arguments: inputs..., output, rows, cols, Reduction as int, 1 for 16-byte loads (cols a
// multiple of the vector width, pointers aligned) else 0.
enum class Reduction { kSum = 0, kMax = 1, kMean = 2 };
// The backward of the row reduction for input i: gpuscope_fused_rows_grad<i>. grad_in[r·cols + c] =
// dy[r] · ∂chain/∂input_i, divided by cols for a mean, and only where the element's value equals the
// forward's maximum y[r] for a max (ties all receive it). Arguments: inputs..., y, dy, grad_in, rows, cols,
// Reduction as int.
std::string rowsGradKernel(int input);

std::string fusedKernelSource(const ParsedExpr& expr, DType dtype);

}  // namespace gpuscope::runtime
