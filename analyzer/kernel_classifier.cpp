#include "analyzer/kernel_classifier.h"

#include "analyzer/kernel_names.h"
#include "analyzer/trace_data.h"

#include <array>
#include <cctype>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace gpuscope::analysis {

namespace {

using Tokens = std::initializer_list<std::string_view>;

bool containsAny(std::string_view name, Tokens tokens) {
  for (std::string_view t : tokens) {
    if (name.find(t) != std::string_view::npos) return true;
  }
  return false;
}

bool startsWithAny(std::string_view name, Tokens prefixes) {
  for (std::string_view p : prefixes) {
    if (name.substr(0, p.size()) == p) return true;
  }
  return false;
}

// Each rule: the tokens (in the lower-cased name) that give a class. Rules are tried in order, so a more
// specific kind wins over a general one: a batch-norm kernel that PyTorch runs through its elementwise
// template is normalisation, a copy through it is a copy, cuBLASLt's split-K reduction is part of a GEMM.
struct Rule {
  KernelClass cls;
  Tokens tokens;
};

const Rule kRules[] = {
    {KernelClass::kCommunication,
     {"nccl", "nvshmem", "allreduce", "all_reduce", "allgather", "all_gather", "reducescatter", "reduce_scatter",
      "alltoall", "all_to_all", "cross_device_reduce", "multimem", "sendrecv"}},
    // Framework and autotuner bookkeeping (XLA's autotuner, PyTorch's RNG state unpacking).
    {KernelClass::kOther,
     {"redzoneallocator", "xla_fp_comparison", "delaykernel", "repeatbufferkernel", "philox::unpack"}},
    {KernelClass::kAttention,
     {"flash_fwd", "flash_bwd", "flash_attn", "flashattn", "fmha", "sdpa", "attention", "attn_fwd", "attn_bwd",
      "compute_dot_do_o", "convert_dq_to"}},
    {KernelClass::kOptimizer,
     {"multi_tensor_apply", "multi_tensor", "fused_adam", "fusedadam", "adamw", "adam_", "fusedsgd", "fused_sgd",
      "lamb_", "_foreach_"}},
    {KernelClass::kNormalization,
     {"layer_norm", "layernorm", "batch_norm", "batchnorm", "group_norm", "groupnorm", "rms_norm", "rmsnorm",
      "instance_norm", "instancenorm", "gammabetabackward", "softmax", "welford", "bn_fw", "bn_bw"}},
    {KernelClass::kConvolution,
     {"conv1d", "conv2d", "conv3d", "convolution", "convolve", "implicit_gemm", "fprop", "dgrad", "wgrad", "winograd",
      "depthwise", "im2col", "col2im"}},
    {KernelClass::kGemm,
     {"gemm", "nvjet", "matmul", "splitkreduce", "gemv", "cublas", "cutlass", "xmma", "dot_general", "tensorop"}},
    {KernelClass::kOther,  // sorting, scans, indexing: memory-bound but not what fusion removes
     {"radix_sort", "radixsort", "segmented_sort", "mergesort", "_sort", "scan", "cumsum", "unique", "compact",
      "histogram", "gather", "scatter", "embedding", "index_select", "indexselect", "index_put", "indexfunc",
      "nonzero"}},
    {KernelClass::kCopy,
     {"copy", "transpose", "concat", "catarray", "nchwtonhwc", "nhwctonchw", "addpadding", "permute", "memcpy",
      "convert", "dynamic_slice", "slice_fusion", "broadcast", "pad_fusion"}},
    {KernelClass::kReduction,
     {"reduce", "reduction", "argmax", "argmin", "triton_red_", "triton_per_", "nll_loss", "cross_entropy", "cupy_sum",
      "cupy_prod", "cupy_max", "cupy_min", "cupy_mean", "cupy_var", "cupy_all", "cupy_any", "cupy_count_nonzero",
      "cupy_argmax", "cupy_argmin"}},
    {KernelClass::kElementwise,
     {"elementwise", "pointwise", "triton_poi_",  "loop_",      "wrapped_", "cupy_",       "functor",
      "dropout",     "fill",      "distribution", "activation", "gelu",     "relu",        "silu",
      "sigmoid",     "tanh",      "clamp",        "masked_",    "where",    "_kernel_cuda"}},
};

// Triton templates (torch.compile's max-autotune) carry the op they implement after "triton_tem_fused_".
KernelClass tritonTemplateClass(std::string_view name) {
  if (containsAny(name, {"convolution"})) return KernelClass::kConvolution;
  if (containsAny(name, {"attention"})) return KernelClass::kAttention;
  return KernelClass::kGemm;
}

// cuBLASLt's nvjet kernels name their types after the architecture: "nvjet_sm90_tst_…" is bf16 inputs
// with fp32 compute, "hsh" fp16, "sss" fp32, "qqtst" fp8 (e4m3) inputs, "ddd" fp64.
Precision nvjetPrecision(std::string_view name) {
  size_t pos = name.find("nvjet_");
  if (pos == std::string_view::npos) return Precision::kUnknown;
  std::string_view rest = name.substr(pos + 6);
  if (rest.substr(0, 2) == "sm") {
    size_t underscore = rest.find('_');
    if (underscore == std::string_view::npos) return Precision::kUnknown;
    rest = rest.substr(underscore + 1);
  }
  if (rest.empty()) return Precision::kUnknown;
  switch (rest.front()) {
    case 'h': return Precision::kFp16;
    case 't': return Precision::kBf16;
    case 's': return Precision::kFp32;
    case 'd': return Precision::kFp64;
    case 'q':
    case 'e': return Precision::kFp8;
    case 'i': return Precision::kInt8;
    default: return Precision::kUnknown;
  }
}

// Input precision from the type names that cuBLAS (sm90_xmma_gemm_bf16bf16_…), cuDNN, CUTLASS
// (cutlass_80_tensorop_s1688gemm: fp32 data on TF32 tensor cores) and FlashAttention templates carry.
// The first type named is the inputs', so 16- and 8-bit types are looked for before fp32 accumulators.
// C type names ("float", "double") count only when asked: attention helpers pass float pointers whatever the
// precision of the attention itself.
Precision namedPrecision(std::string_view name, bool c_types_count) {
  if (Precision p = nvjetPrecision(name); p != Precision::kUnknown) return p;
  if (containsAny(name, {"e4m3", "e5m2", "fp8", "f8f8", "float8"})) return Precision::kFp8;
  if (containsAny(name, {"bf16", "bfloat16"})) return Precision::kBf16;
  if (containsAny(name, {"tf32"})) return Precision::kTf32;
  if (containsAny(name, {"f16", "fp16", "half", "h1688", "h16816", "hgemm"})) return Precision::kFp16;
  if (containsAny(name, {"tensorop_s1688"})) return Precision::kTf32;  // fp32 data on the m16n8k8 TF32 MMA
  if (containsAny(name, {"int8", "i8i8", "imma", "s8s8"})) return Precision::kInt8;
  if (containsAny(name, {"f64", "dgemm"}) || (c_types_count && containsAny(name, {"double"}))) return Precision::kFp64;
  if (containsAny(name, {"f32", "sgemm", "ffma"}) || (c_types_count && containsAny(name, {"float"}))) {
    return Precision::kFp32;
  }
  return Precision::kUnknown;
}

// The function's own name: "void ns::scale_add<float>(float*, int)" -> "scale_add".
std::string_view functionName(std::string_view name) {
  name = name.substr(0, std::min(name.find('('), name.find('<')));
  if (size_t colon = name.rfind("::"); colon != std::string_view::npos) name = name.substr(colon + 2);
  if (size_t space = name.rfind(' '); space != std::string_view::npos) name = name.substr(space + 1);
  return name;
}

// Kernels a program writes itself carry plain names ("add_bias", "scaleKernel", "adam"): their words
// say what they do when no library naming scheme does.
KernelClass classFromWords(std::string_view function) {
  static const Tokens kElementwise = {
      "add",  "sub",   "subtract", "mul",  "multiply", "div",  "divide",     "scale",       "bias",     "relu",
      "gelu", "silu",  "sigmoid",  "tanh", "exp",      "log",  "sqrt",       "axpy",        "saxpy",    "daxpy",
      "fma",  "clamp", "abs",      "neg",  "square",   "cast", "activation", "elementwise", "pointwise"};
  static const Tokens kReduction = {"sum", "reduce", "reduction", "max", "min", "mean", "norm2", "dot"};
  static const Tokens kOptimizer = {"adam", "adamw", "sgd", "momentum", "lamb", "lion", "optimizer"};
  std::vector<std::string> words;
  std::string word;
  for (size_t i = 0; i <= function.size(); ++i) {
    const char c = i < function.size() ? function[i] : '_';
    const bool boundary = c == '_' || std::isdigit(static_cast<unsigned char>(c)) ||
                          (std::isupper(static_cast<unsigned char>(c)) && !word.empty());
    if (boundary && !word.empty()) words.push_back(std::exchange(word, {}));
    if (c != '_' && !std::isdigit(static_cast<unsigned char>(c))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  auto has = [&](Tokens set) {
    for (const std::string& w : words) {
      for (std::string_view t : set) {
        if (w == t) return true;
      }
    }
    return false;
  };
  if (has(kOptimizer)) return KernelClass::kOptimizer;
  if (has(kReduction)) return KernelClass::kReduction;
  if (has(kElementwise)) return KernelClass::kElementwise;
  return KernelClass::kOther;
}

// PyTorch's eager indexing kernels whose every output element is one indexed load or store: index_select
// (vectorized_gather_kernel, indexSelect*), gather, scatter and scatter_add (_scatter_gather_elementwise_kernel);
// x[idx]'s index_elementwise_kernel is elementwise already. torch.compile folds them into the kernels that produce or
// consume the values: a PyTorch Geometric GCN's gathers, edge weighting and scatter_add (35.4 ms a step eager) became
// Triton kernels of 8.4 ms on an H200. Not index_add (indexFunc*: Inductor leaves it to ATen, as it did there),
// embedding backward or index_put with accumulation (sorts).
bool isEagerGatherOrScatter(std::string_view lower) {
  if (lower.find("at::native") == std::string_view::npos) return false;
  return containsAny(lower, {"vectorized_gather_kernel", "indexselectlargeindex", "indexselectsmallindex",
                             "_scatter_gather_elementwise_kernel"});
}

}  // namespace

KernelKind classifyKernel(std::string_view name) {
  // A graph recorded as a whole holds kernels of every kind: none is told, and none is fused from outside it.
  if (isWholeGraphName(name)) return KernelKind{.inside_library = true, .whole_graph = true};
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  KernelKind kind;
  if (startsWithAny(lower, {"triton_tem_"})) {
    kind.cls = tritonTemplateClass(lower);
  } else {
    bool matched = false;
    for (const Rule& rule : kRules) {
      if (containsAny(lower, rule.tokens)) {
        kind.cls = rule.cls;
        matched = true;
        break;
      }
    }
    if (!matched) kind.cls = classFromWords(functionName(name));
  }
  // cuDNN's RNN call runs its own pointwise kernels between the GEMMs of each layer and time step (their template
  // arguments are cudnnRNN… modes) and its own dropout between layers; torch.compile leaves an LSTM to that one
  // call, so nothing outside cuDNN fuses them (PyTorch's word_language_model example, H200, 2026-12-02).
  kind.inside_library = (kind.cls == KernelClass::kCopy && lower.find("cudnn") != std::string::npos) ||
                        containsAny(lower, {"cudnnrnn", "cudnn::dropout"});
  kind.indexed_access = isEagerGatherOrScatter(lower);  // each name is one of the indexing rule's (other)
  kind.layout_transform = kind.inside_library && containsAny(lower, {"nchwtonhwc", "nhwctonchw"});
  if (kind.cls == KernelClass::kGemm || kind.cls == KernelClass::kConvolution || kind.cls == KernelClass::kAttention) {
    kind.precision = namedPrecision(lower, kind.cls != KernelClass::kAttention);
    // cuBLAS's split-K reduction sums the partial tiles of a GEMM of any precision in fp32: its "float" says
    // nothing of the GEMM's math.
    if (lower.find("splitkreduce") != std::string::npos && kind.precision == Precision::kFp32) {
      kind.precision = Precision::kUnknown;
    }
    // cuDNN's attention kernels say "f16" for both 16-bit types; the name cannot tell fp16 from bf16.
    if (kind.cls == KernelClass::kAttention && kind.precision == Precision::kFp16 &&
        !containsAny(lower, {"fp16", "half"})) {
      kind.precision = Precision::kUnknown;
    }
  }
  return kind;
}

std::vector<KernelKind> classifyConfigs(const TraceData& trace) {
  std::vector<KernelKind> kinds;
  kinds.reserve(trace.configs.size());
  for (const schema::KernelConfigRow& c : trace.configs) kinds.push_back(classifyKernel(trace.text(c.name.id)));
  return kinds;
}

std::string_view toString(KernelClass cls) {
  static constexpr std::array<std::string_view, kKernelClassCount> kNames = {
      "elementwise", "reduction", "normalisation", "gemm",          "convolution",
      "attention",   "optimizer", "copy",          "communication", "other"};
  return kNames[static_cast<size_t>(cls)];
}

std::string_view toString(Precision precision) {
  switch (precision) {
    case Precision::kFp64: return "fp64";
    case Precision::kFp32: return "fp32";
    case Precision::kTf32: return "tf32";
    case Precision::kBf16: return "bf16";
    case Precision::kFp16: return "fp16";
    case Precision::kFp8: return "fp8";
    case Precision::kInt8: return "int8";
    case Precision::kUnknown: break;
  }
  return "";
}

}  // namespace gpuscope::analysis
