#include "advisor/runtime/fused_kernel_source.h"

#include <cstdio>

namespace gpuscope::runtime {

std::string_view toString(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "fp32";
    case DType::kBF16: return "bf16";
    case DType::kF16: return "fp16";
  }
  return "fp32";
}

bool parseDType(std::string_view text, DType& out) {
  for (DType d : {DType::kF32, DType::kBF16, DType::kF16}) {
    if (text == toString(d)) return out = d, true;
  }
  return false;
}

int elementBytes(DType dtype) { return dtype == DType::kF32 ? 4 : 2; }
int vectorWidth(DType dtype) { return 16 / elementBytes(dtype); }

// Two 16-byte loads in flight per thread where the chain has one input; with more inputs one vector of
// each is already enough, and more only adds registers.
int vectorsPerThread(const ParsedExpr& expr) { return expr.inputs.size() == 1 ? 2 : 1; }

namespace {

// Storage type and conversions to and from fp32. bf16 rounds to nearest even and keeps NaNs quiet, with the
// hardware's conversion from sm_80 on.
std::string_view conversions(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "typedef float T;\n"
             "__device__ __forceinline__ float to_f(T v) { return v; }\n"
             "__device__ __forceinline__ T from_f(float f) { return f; }\n";
    case DType::kBF16:
      return "typedef unsigned short T;\n"
             "__device__ __forceinline__ float to_f(T v) { return __uint_as_float(((unsigned)v) << 16); }\n"
             "__device__ __forceinline__ T from_f(float f) {\n"
             "#if __CUDA_ARCH__ >= 800\n"  // one instruction where the hardware has it
             "  T h; asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); return h;\n"
             "#else\n"
             "  unsigned u = __float_as_uint(f);\n"
             "  if ((u & 0x7fffffffu) > 0x7f800000u) return (T)((u >> 16) | 0x40u);\n"
             "  u += 0x7fffu + ((u >> 16) & 1u);\n"
             "  return (T)(u >> 16);\n"
             "#endif\n"
             "}\n";
    case DType::kF16:
      return "typedef unsigned short T;\n"
             "__device__ __forceinline__ float to_f(T v) { float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : "
             "\"h\"(v)); "
             "return f; }\n"
             "__device__ __forceinline__ T from_f(float f) { T h; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : "
             "\"f\"(f)); "
             "return h; }\n";
  }
  return "";
}

constexpr std::string_view kMath =
    "__device__ __forceinline__ float f_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }\n"
    "__device__ __forceinline__ float f_relu(float x) { return fmaxf(x, 0.0f); }\n"
    "__device__ __forceinline__ float f_gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }\n"
    "__device__ __forceinline__ float f_gelu_tanh(float x) {\n"
    "  return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));\n"
    "}\n"
    "__device__ __forceinline__ float f_silu(float x) { return x / (1.0f + expf(-x)); }\n"
    "__device__ __forceinline__ float f_step(float x) { return x > 0.0f ? 1.0f : 0.0f; }\n"
    "__device__ __forceinline__ float f_sign(float x) { return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f); }\n";

std::string functionName(const std::string& name) {
  if (name == "exp" || name == "log" || name == "sqrt" || name == "rsqrt" || name == "tanh" || name == "erf") {
    return name + "f";
  }
  if (name == "abs") return "fabsf";
  if (name == "max") return "fmaxf";
  if (name == "min") return "fminf";
  return "f_" + name;
}

std::string code(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::kInput: return "x" + std::to_string(e.input);
    case Expr::Kind::kConstant: {
      char buffer[64];
      std::snprintf(buffer, sizeof buffer, "%.9gf", e.value);
      std::string text = buffer;
      if (text.find_first_of(".e") == std::string::npos) text.insert(text.size() - 1, ".0");  // "2f" is not a float
      return "(" + text + ")";
    }
    case Expr::Kind::kUnary: return "(-" + code(*e.args[0]) + ")";
    case Expr::Kind::kBinary: return "(" + code(*e.args[0]) + " " + e.name + " " + code(*e.args[1]) + ")";
    case Expr::Kind::kCall: {
      std::string s = functionName(e.name) + "(";
      for (size_t i = 0; i < e.args.size(); ++i) s += (i ? ", " : "") + code(*e.args[i]);
      return s + ")";
    }
  }
  return "";
}

std::string parameters(const ParsedExpr& expr) {
  std::string p;
  // No __restrict__: the output may be an input (an in-place update such as an optimizer step).
  for (size_t i = 0; i < expr.inputs.size(); ++i) p += "const T* in" + std::to_string(i) + ", ";
  return p + "T* out";
}

// The row-reduction kernel: each thread folds its share of a row, then the warps' and the block's partial
// results are combined with shuffles through shared memory.
std::string rowsKernel(const ParsedExpr& expr, const std::string& vec, const std::string& body) {
  std::string src = "extern \"C\" __global__ void " + std::string(kRowsKernel) + "(" + parameters(expr) +
                    ", long long rows, long long cols, int op, int vectorized) {\n";
  src +=
      "  __shared__ float partial[32];\n"
      "  const float identity = op == 1 ? __int_as_float(0xff800000) : 0.0f;  // -inf for max\n"
      "  for (long long row = blockIdx.x; row < rows; row += gridDim.x) {\n"
      "    float acc = identity;\n"
      "    const long long base = row * cols;\n"
      "    if (vectorized) {\n"
      "      for (long long v = threadIdx.x; v < cols / " +
      vec + "; v += blockDim.x) {\n";
  for (size_t i = 0; i < expr.inputs.size(); ++i) {
    const std::string n = std::to_string(i);
    src += "        __align__(16) T a" + n + "[" + vec + "];\n        *reinterpret_cast<uint4*>(a" + n +
           ") = __ldg(reinterpret_cast<const uint4*>(in" + n + " + base) + v);\n";
  }
  src += "#pragma unroll\n        for (int k = 0; k < " + vec + "; ++k) {\n";
  for (size_t i = 0; i < expr.inputs.size(); ++i) {
    src += "          const float x" + std::to_string(i) + " = to_f(a" + std::to_string(i) + "[k]);\n";
  }
  src += "          const float value = " + body + ";\n          acc = op == 1 ? fmaxf(acc, value) : acc + value;\n";
  src += "        }\n      }\n    } else {\n      for (long long c = threadIdx.x; c < cols; c += blockDim.x) {\n";
  for (size_t i = 0; i < expr.inputs.size(); ++i) {
    src += "        const float x" + std::to_string(i) + " = to_f(in" + std::to_string(i) + "[base + c]);\n";
  }
  src += "        const float value = " + body + ";\n        acc = op == 1 ? fmaxf(acc, value) : acc + value;\n";
  src +=
      "      }\n    }\n"
      "    for (int o = 16; o > 0; o >>= 1) {\n"
      "      const float other = __shfl_xor_sync(0xffffffffu, acc, o);\n"
      "      acc = op == 1 ? fmaxf(acc, other) : acc + other;\n"
      "    }\n"
      "    if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = acc;\n"
      "    __syncthreads();\n"
      "    if (threadIdx.x < 32) {\n"
      "      acc = threadIdx.x < (blockDim.x >> 5) ? partial[threadIdx.x] : identity;\n"
      "      for (int o = 16; o > 0; o >>= 1) {\n"
      "        const float other = __shfl_xor_sync(0xffffffffu, acc, o);\n"
      "        acc = op == 1 ? fmaxf(acc, other) : acc + other;\n"
      "      }\n"
      "      if (threadIdx.x == 0) out[row] = from_f(op == 2 ? acc / (float)cols : acc);\n"
      "    }\n"
      "    __syncthreads();  // partial[] is reused by the next row\n"
      "  }\n}\n";
  return src;
}

// The backward of the row reduction for one input: a block per row, its threads along the row.
std::string rowsGradKernelSource(const ParsedExpr& expr, const std::string& body, int input) {
  std::string src = "extern \"C\" __global__ void " + rowsGradKernel(input) + "(";
  for (size_t i = 0; i < expr.inputs.size(); ++i) src += "const T* __restrict__ in" + std::to_string(i) + ", ";
  src +=
      "const T* __restrict__ y, const T* __restrict__ dy, T* __restrict__ grad, long long rows, long long cols, "
      "int op) {\n"
      "  for (long long row = blockIdx.x; row < rows; row += gridDim.x) {\n"
      "    const float g = op == 2 ? to_f(dy[row]) / (float)cols : to_f(dy[row]);\n"
      "    const long long base = row * cols;\n"
      "    for (long long c = threadIdx.x; c < cols; c += blockDim.x) {\n";
  for (size_t i = 0; i < expr.inputs.size(); ++i) {
    src += "      const float x" + std::to_string(i) + " = to_f(in" + std::to_string(i) + "[base + c]);\n";
  }
  // The maximum as stored (rounded to T) is compared with the element's value rounded the same way.
  src += "      const bool picked = op != 1 || from_f(" + body + ") == y[row];\n";
  src += "      grad[base + c] = from_f(picked ? g * (" + code(*derivative(*expr.root, input)) + ") : 0.0f);\n";
  src += "    }\n  }\n}\n";
  return src;
}

}  // namespace

std::string rowsGradKernel(int input) { return "gpuscope_fused_rows_grad" + std::to_string(input); }

std::string fusedKernelSource(const ParsedExpr& expr, DType dtype) {
  const std::string vec = std::to_string(vectorWidth(dtype));
  const std::string body = code(*expr.root);
  std::string src = "// gpuscope fused chain (" + std::string(toString(dtype)) + "): " + expr.canonical + "\n";
  src += std::string(conversions(dtype)) + std::string(kMath);
  src += "extern \"C\" __global__ void " + std::string(kVectorKernel) + "(" + parameters(expr) +
         ", long long vectors) {\n";
  src += "  constexpr int U = " + std::to_string(vectorsPerThread(expr)) + ";\n";
  src +=
      "  const long long stride = (long long)gridDim.x * blockDim.x;\n"
      "  for (long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x; v < vectors; v += stride * U) {\n";
  for (size_t i = 0; i < expr.inputs.size(); ++i)
    src += "    __align__(16) T a" + std::to_string(i) + "[U][" + vec + "];\n";
  src += "#pragma unroll\n    for (int u = 0; u < U; ++u) {\n      if (v + u * stride >= vectors) break;\n";
  for (size_t i = 0; i < expr.inputs.size(); ++i) {
    const std::string n = std::to_string(i);
    src += "      *reinterpret_cast<uint4*>(a" + n + "[u]) = __ldg(reinterpret_cast<const uint4*>(in" + n +
           ") + v + u * stride);\n";
  }
  src += "    }\n#pragma unroll\n    for (int u = 0; u < U; ++u) {\n      if (v + u * stride >= vectors) break;\n";
  src += "      __align__(16) T r[" + vec + "];\n#pragma unroll\n      for (int k = 0; k < " + vec + "; ++k) {\n";
  for (size_t i = 0; i < expr.inputs.size(); ++i) {
    src += "        const float x" + std::to_string(i) + " = to_f(a" + std::to_string(i) + "[u][k]);\n";
  }
  src += "        r[k] = from_f(" + body + ");\n      }\n";
  src += "      reinterpret_cast<uint4*>(out)[v + u * stride] = *reinterpret_cast<const uint4*>(r);\n    }\n  }\n}\n";
  src += "extern \"C\" __global__ void " + std::string(kScalarKernel) + "(" + parameters(expr) +
         ", long long begin, long long n) {\n";
  src +=
      "  for (long long i = begin + blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;\n"
      "       i += (long long)gridDim.x * blockDim.x) {\n";
  for (size_t i = 0; i < expr.inputs.size(); ++i) {
    src += "    const float x" + std::to_string(i) + " = to_f(in" + std::to_string(i) + "[i]);\n";
  }
  src += "    out[i] = from_f(" + body + ");\n  }\n}\n";
  src += rowsKernel(expr, vec, body);
  for (size_t i = 0; i < expr.inputs.size(); ++i) src += rowsGradKernelSource(expr, body, static_cast<int>(i));
  return src;
}

}  // namespace gpuscope::runtime
