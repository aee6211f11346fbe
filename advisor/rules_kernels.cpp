// What the kernels themselves do: chains that could be one kernel, GEMMs off the tensor cores or on
// unaligned shapes, attention and optimizer steps written out kernel by kernel.
#include <algorithm>
#include <cctype>

#include "advisor/rule.h"
#include "analyzer/kernel_names.h"
#include "analyzer/phases.h"
#include "analyzer/units.h"

namespace gpuscope::advisor {

using analysis::formatCount;
using analysis::formatDuration;
using analysis::formatFixed;
using analysis::formatShare;
using analysis::KernelClass;
using analysis::Precision;

namespace {

std::optional<Finding> fusableChains(const Context& c);
std::optional<Finding> fp32Gemm(const Context& c);
std::optional<Finding> gemmAlignment(const Context& c);
std::optional<Finding> unfusedAttention(const Context& c);
std::optional<Finding> unfusedOptimizer(const Context& c);
std::optional<Finding> convolutionLayout(const Context& c);

constexpr Rule kRules[] = {
    {.id = "fusable_chains",
     .title = "Kernel chains that one fused kernel could replace",
     .reads = "fusable chains of the steady iterations (analyzer/fusion_chains)",
     .fires_when = "fusing the recurring chains would save 3 % of the step or more",
     .why = "Each kernel of a chain writes its result to device memory and the next reads it back; one fused kernel "
            "keeps it in registers and launches once.",
     .fix = "Fuse each chain into one kernel: let a compiler do it, or apply the plan with gpuscope's runtime.",
     .snippets = {"model = torch.compile(model)  # Inductor fuses elementwise and reduction chains",
                  "step = jax.jit(step)  # XLA fuses inside one jit",
                  "fused = cupy.fuse(lambda x, y: ...)  # or cupy.ElementwiseKernel for the chain",
                  "// one kernel doing the chain's work per element: out[i] = f3(f2(f1(in[i])))"},
     .verify = "Record again: `gpuscope stats --report fusion` no longer lists the chains, and there are fewer kernels "
               "per step.",
     .check = fusableChains},
    {.id = "fp32_gemm",
     .title = "GEMMs and convolutions in fp32, off the tensor cores",
     .reads = "kernel classes and precisions of the kernels inside the steady steps",
     .fires_when = "fp32 GEMMs and convolutions (and, where autocast is the fix, fp32 fused attention) take 5 % of "
                   "the step or more",
     .why = "Tensor cores run bf16 and TF32 GEMMs many times faster than the CUDA cores run fp32 ones.",
     .snippets = {"with torch.autocast(\"cuda\", dtype=torch.bfloat16):\n    loss = model(x, y)\n"
                  "# or, keeping fp32 storage: torch.backends.cuda.matmul.allow_tf32 = True",
                  "jax.config.update(\"jax_default_matmul_precision\", \"tensorfloat32\")  # or cast to bfloat16",
                  "os.environ[\"CUPY_TF32\"] = \"1\"  # before importing cupy: TF32 tensor cores for GEMMs",
                  "cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH);"},
     .verify = "Record again: `gpuscope stats --report kernel_classes` shows the GEMMs as bf16 or tf32.",
     .check = fp32Gemm},
    {.id = "gemm_alignment",
     .title = "GEMMs on dimensions that are not a multiple of 8",
     .reads = "kernel names (alignment variant) and precisions of the GEMMs inside the steady steps",
     .fires_when = "padding the tensor-core GEMMs with alignment 1 or 2 would save 2 % of the step or more",
     .why = "Tensor-core kernels load 16-byte vectors; a row length that is not a multiple of 8 bf16 values forces the "
            "slow kernels that load one element at a time.",
     .fix = "Pad the odd dimension — usually the vocabulary or a hidden size — to a multiple of 64.",
     .snippets =
         {"vocab_size = (vocab_size + 63) // 64 * 64  # e.g. 50257 -> 50304; the extra logits are never targets",
          "vocab = (vocab + 63) // 64 * 64", "n = (n + 63) // 64 * 64",
          "int n_padded = (n + 63) / 64 * 64;  // allocate and pass the padded leading dimension"},
     .verify = "Record again: no GEMM kernel name ends in align1 or align2, and the GEMM time falls.",
     .check = gemmAlignment},
    {.id = "unfused_attention",
     .title = "Attention written out as GEMM, softmax, GEMM",
     .reads = "each stream's kernel sequence inside the steady steps: GEMM, softmax, GEMM",
     .fires_when = "the written-out attention's softmax and masking kernels take 1 % of the step or more",
     .why = "Fused attention computes softmax(QKᵀ)V tile by tile on chip: the sequence-squared score matrix is never "
            "written to memory, and the kernels in between go.",
     .fix = "Call the framework's fused scaled-dot-product attention.",
     .snippets =
         {"y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)",
          "y = jax.nn.dot_product_attention(q, k, v, is_causal=True)", "",
          "// cuDNN's fused attention (cudnn_frontend SDPA) or FlashAttention instead of GEMM + softmax + GEMM"},
     .verify =
         "Record again: `gpuscope stats --report kernel_classes` shows attention kernels and no softmax between GEMMs.",
     .check = unfusedAttention},
    {.id = "unfused_optimizer",
     .title = "The optimizer launches kernels per parameter",
     .reads = "kernels launched inside the optimizer NVTX ranges of the steady steps; in a training step with none "
              "(the script's own update), those between each backward's end and the next forward",
     .fires_when = "64 or more kernels per optimizer step, under half of them multi-tensor kernels",
     .why = "Small per-tensor kernels are bound by launches and memory round trips; multi-tensor (foreach) and fused "
            "optimizers update many tensors per kernel.",
     .fix = "Use the fused (or foreach) implementation of the optimizer.",
     .snippets =
         {"optimizer = torch.optim.AdamW(model.parameters(), lr=lr, fused=True)",
          "optimizer = optax.adamw(lr)  # under jax.jit the update is one fused computation", "",
          "// update all parameters in one multi-tensor kernel (a list of pointers and sizes), not one per tensor"},
     .verify = "Record again: the optimizer range holds a few multi_tensor_apply kernels instead of hundreds.",
     .check = unfusedOptimizer},
    {.id = "convolution_layout",
     .title = "Convolutions on NCHW tensors, transposed to NHWC and back by cuDNN",
     .reads = "cuDNN's layout-transform kernels (nchwToNhwc, nhwcToNchw) inside the steady steps",
     .fires_when = "they take 5 % of the step or more",
     .why = "cuDNN's tensor-core convolutions work on channels-last (NHWC) data; given NCHW tensors, cuDNN copies "
            "every input, filter and output to NHWC and back around each convolution, a round trip through device "
            "memory per tensor.",
     .fix = "Keep the model's weights and its inputs in channels-last layout, so cuDNN runs its NHWC kernels "
            "directly.",
     .snippets = {"model = model.to(memory_format=torch.channels_last)\n"
                  "x = x.to(memory_format=torch.channels_last)  # each batch, before the forward",
                  "", "", "// describe tensors and filters as CUDNN_TENSOR_NHWC and store them that way"},
     .verify = "Record again: `gpuscope stats --report kernels` lists no nchwToNhwc or nhwcToNchw kernels.",
     .check = convolutionLayout},
};

bool contains(std::string_view text, std::string_view what) { return text.find(what) != std::string_view::npos; }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

std::string join(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& n : names) text += (text.empty() ? "" : ", ") + n;
  return text;
}

std::string chainText(const analysis::FusionPattern& p) {
  std::string text;
  for (size_t i = 0; i < p.kernels.size() && i < 4; ++i) {
    text += (i ? " → " : "") + analysis::shortKernelName(p.kernels[i], 48);
  }
  if (p.kernels.size() > 4) text += " → … (" + std::to_string(p.kernels.size()) + " kernels)";
  return text;
}

// Saving and gaps between members, all occurrences, of a set of chains.
std::pair<int64_t, int64_t> chainsSaving(const std::vector<const analysis::FusionPattern*>& chains) {
  int64_t saving = 0, gaps = 0;
  for (const analysis::FusionPattern* p : chains) saving += p->saving_ns, gaps += p->gap_time_ns;
  return {saving, gaps};
}

// The chains are all the steps' recurring ones; the plan's fixes and the gain are those `gpuscope apply` fuses
// (a PyTorch model's, not the loss and metrics the script computes around it: a tabular classifier's plan counted
// its loss and accuracy chains and predicted 1.39 ms for a step that compiled took 2.70, H200), or, where it fuses
// none of them, every one by hand.
std::optional<Finding> fusableChains(const Context& c) {
  const std::vector<const analysis::FusionPattern*> kept = c.chainsToFuse();
  const int64_t per_step = c.perStep(chainsSaving(kept).first);
  if (kept.empty() || c.shareOfStep(per_step) < 0.03) return std::nullopt;
  std::vector<const analysis::FusionPattern*> fused = c.chainsApplyFuses();
  Finding f = startFinding(c, kRules[0]);
  f.title = formatCount(static_cast<int64_t>(kept.size())) + " recurring kernel chains could each be one kernel";
  f.summary = "Memory-bound kernels run back to back, each reading what the previous one wrote to device memory.";
  const auto& k = c.trace.kernels;
  for (size_t i = 0; i < kept.size() && i < 5; ++i) {
    const auto& p = *kept[i];
    const size_t first = p.first_occurrence.front(), last = p.first_occurrence.back();
    f.evidence.push_back(
        {perStepCount(c, p.occurrences) + "× " + perStepWords(c) + ": " + chainText(p) + "; fusing saves " +
             formatDuration(c.perStep(p.saving_ns)),
         {{"kernel", "first occurrence", k.start_ns[first], k.end_ns[last], k.correlation_id[first]}}});
  }
  for (size_t i = 0; i < fused.size() && i < 5; ++i) {
    const auto& p = *fused[i];
    f.fix.plan.push_back(
        {"fusion-" + std::to_string(i + 1),
         "fusion",
         f.id,
         {{"kernels", p.kernels}, {"occurrences_per_step", std::max<int64_t>(1, c.perStep(p.occurrences))}}});
  }
  const size_t outside = kept.size() - fused.size();
  if (outside > 0) {
    f.evidence.push_back({formatCount(static_cast<int64_t>(outside)) +
                              " of the chains run outside the model's "
                              "forward and backward (the loss, metrics, the batch's preparation): fusing them saves " +
                              formatDuration(per_step - c.perStep(chainsSaving(fused).first)) + " " + perStepWords(c) +
                              ", compiling the code around the model by hand; gpuscope apply compiles the model "
                              "alone and counts the chains inside it",
                          {}});
  }
  const std::vector<const analysis::FusionPattern*>& counted = fused.empty() ? kept : fused;
  const auto [saving, gaps] = chainsSaving(counted);
  f.gain = timeGain(c, c.perStep(saving),
                    counted.front()->basis + "; summed over " + std::to_string(counted.size()) + " recurring chains" +
                        (outside > 0 && !fused.empty() ? " inside the model" : ""));
  f.gain.idle_ns = std::min(f.gain.time_ns, c.perStep(gaps));
  setSeverity(f);
  return f;
}

struct KernelSet {
  int64_t count = 0, time_ns = 0;
  size_t first = 0;
  std::vector<std::string> names;  // distinct, the first few

  void add(const Context& c, size_t kernel) {
    if (count++ == 0) first = kernel;
    time_ns += c.trace.kernels.end_ns[kernel] - c.trace.kernels.start_ns[kernel];
    const std::string& name = c.trace.kernelName(kernel);
    const std::string short_name = analysis::shortKernelName(name);
    if (names.size() < 3 && std::find(names.begin(), names.end(), short_name) == names.end()) {
      names.push_back(short_name);
    }
  }
  TraceRef firstRef(const Context& c, std::string_view what) const {
    const auto& k = c.trace.kernels;
    return {"kernel", std::string(what), k.start_ns[first], k.end_ns[first], k.correlation_id[first]};
  }
};

template <typename Pred>
KernelSet kernelsInSteps(const Context& c, Pred pred) {
  KernelSet set;
  for (size_t i = 0; i < c.trace.kernels.size(); ++i) {
    if (c.inSteps(i) && pred(c.kindOf(i), c.trace.kernelName(i))) set.add(c, i);
  }
  return set;
}

// Speed-ups measured on an H100 (docs/benchmarks.md, tests/bench/gemm_alignment.py), the low end taken.
constexpr double kBf16OverFp32 = 8.0;
constexpr double kTf32OverFp32 = 4.0;

// bf16 over TF32 on the tensor cores: the H100's dense bf16 rate (989 TFLOP/s) is twice its TF32 rate
// (495 TFLOP/s, NVIDIA's H100 datasheet), for GEMMs and convolutions long enough to be bound by the math;
// one shorter than kMathBoundNs is bound by its launch and latency, and bf16 does little for it.
constexpr double kBf16OverTf32 = 2.0;
constexpr int64_t kMathBoundNs = 10'000;

// No tensor-core GEMM runs much shorter than this: the smallest bf16 ones in the corpus traces took 2.2-2.5 us
// on an H100. A tiny fp32 GEMM is bound by its launch and latency, and bf16 saves only what it took above it.
constexpr int64_t kSmallGemmNs = 2'500;

// Fused attention in fp32 (PyTorch's memory-efficient kernel, for fp32 inputs) computes its two products on the
// CUDA cores; under bf16 autocast the same call runs a bf16 flash or cuDNN kernel on the tensor cores, taken to
// gain as a GEMM moved to bf16 does.
bool fp32Attention(const analysis::KernelKind& kind) {
  return kind.cls == KernelClass::kAttention && kind.precision == Precision::kFp32;
}

// The fp32 GEMMs' and convolutions' time inside the steps (and fp32 attention's, with `attention`), less what each
// would take on the tensor cores.
int64_t fp32Saving(const Context& c, double speedup, bool attention) {
  int64_t saved = 0;
  const auto& k = c.trace.kernels;
  for (size_t i = 0; i < k.size(); ++i) {
    if (!c.inSteps(i) || !(c.kindOf(i).onCudaCores() || (attention && fp32Attention(c.kindOf(i))))) continue;
    const int64_t d = k.end_ns[i] - k.start_ns[i];
    saved += d - std::max(static_cast<int64_t>(static_cast<double>(d) / speedup), std::min(d, kSmallGemmNs));
  }
  return c.perStep(saved);
}

bool tf32Math(const Context& c, size_t kernel) {
  const analysis::KernelKind& kind = c.kindOf(kernel);
  const auto& k = c.trace.kernels;
  return (kind.cls == KernelClass::kGemm || kind.cls == KernelClass::kConvolution) &&
         kind.precision == Precision::kTf32 && k.end_ns[kernel] - k.start_ns[kernel] >= kMathBoundNs;
}

std::optional<Finding> fp32Gemm(const Context& c) {
  // Where autocast is the fix (PyTorch, JAX), an fp32 model's TF32 GEMMs and convolutions (cuDNN's default
  // for fp32 convolutions) gain from it too: half as much as the fp32 ones on the CUDA cores do.
  const bool autocast = c.framework == Framework::kPyTorch || c.framework == Framework::kJax;
  const KernelSet fp32 = kernelsInSteps(c, [](const auto& kind, const auto&) { return kind.onCudaCores(); });
  const KernelSet attention =
      kernelsInSteps(c, [&](const auto& kind, const auto&) { return autocast && fp32Attention(kind); });
  KernelSet tf32;
  for (size_t i = 0; autocast && i < c.trace.kernels.size(); ++i) {
    if (c.inSteps(i) && tf32Math(c, i)) tf32.add(c, i);
  }
  const int64_t fp32_time = c.perStep(fp32.time_ns + attention.time_ns), tf32_time = c.perStep(tf32.time_ns);
  const double speedup = autocast ? kBf16OverFp32 : kTf32OverFp32;
  const int64_t saved = fp32Saving(c, speedup, autocast) +
                        static_cast<int64_t>(static_cast<double>(tf32_time) * (1.0 - 1.0 / kBf16OverTf32));
  if (c.shareOfStep(fp32_time + tf32_time) < 0.05 || c.shareOfStep(saved) < 0.03) return std::nullopt;
  Finding f = startFinding(c, kRules[1]);
  const bool on_cuda_cores = fp32.count + attention.count > 0;
  const std::string what = on_cuda_cores && tf32.count > 0 ? "fp32 and TF32" : on_cuda_cores ? "fp32" : "TF32";
  f.title = what + " GEMMs and convolutions" + (attention.count > 0 ? " (and attention)" : "") + " take " +
            formatDuration(fp32_time + tf32_time) + " " + perStepWords(c) +
            (on_cuda_cores ? ", partly off the tensor cores" : ", at half the tensor cores' bf16 rate");
  f.summary = on_cuda_cores ? "Matrix multiplies run in full fp32 on the CUDA cores (FFMA/SIMT kernels), not on the "
                              "tensor cores."
                            : "The model computes in fp32: its matrix multiplies and convolutions run as TF32 on the "
                              "tensor cores, at half the rate of bf16, with twice the memory traffic.";
  for (const KernelSet* s : std::initializer_list<const KernelSet*>{&fp32, &attention, &tf32}) {
    if (s->count == 0) continue;
    const std::string kind = s == &tf32 ? "TF32" : "fp32";
    const std::string kernels = s == &attention ? " fused attention kernels " : " GEMMs and convolutions ";
    const int64_t time = c.perStep(s->time_ns);
    f.evidence.push_back({perStepCount(c, s->count) + " " + kind + kernels + perStepWords(c) + ", " +
                              formatDuration(time) + " (" + formatShare(c.shareOfStep(time)) +
                              " of the step), among "
                              "them " +
                              join(s->names),
                          {s->firstRef(c, "first " + kind + (s == &attention ? " attention kernel" : " GEMM"))}});
  }
  f.gain = timeGain(c, saved,
                    "fp32 kernels' time divided by " + formatFixed(speedup, 0) + " (" + (autocast ? "bf16" : "TF32") +
                        "), none below " + formatDuration(kSmallGemmNs) +
                        " (the shortest tensor-core GEMMs seen): on an H100, 4096-8192-wide GEMMs ran 8.9-14.4× "
                        "faster in bf16 and 4.3-5.8× in TF32 "
                        "(docs/benchmarks.md)" +
                        (attention.count > 0 ? "; fp32 fused attention's time divided by as much (its products, "
                                               "run in bf16 by a flash or cuDNN kernel under autocast)"
                                             : "") +
                        "; TF32 kernels' time divided by 2 (the H100's bf16 rate is twice its "
                        "TF32 rate); other kernels unchanged");
  f.fix.summary = autocast ? "Run the forward pass under bf16 autocast (or at least allow TF32)."
                           : "Let cuBLAS use TF32 tensor cores (or move the GEMMs to bf16).";
  f.fix.plan.push_back(
      {"precision-1", "precision", f.id, {{"setting", std::string(autocast ? "bf16_autocast" : "tf32")}}});
  setSeverity(f);
  return f;
}

// Measured on an H100: unaligned against padded (docs/benchmarks.md), the low end taken.
constexpr double kUnalignedHalfSlowdown = 5.5;
constexpr double kUnalignedTf32Slowdown = 2.3;

std::optional<Finding> gemmAlignment(const Context& c) {
  const KernelSet s = kernelsInSteps(c, [](const auto& kind, const std::string& name) {
    const bool tensor_core =
        kind.precision == Precision::kBf16 || kind.precision == Precision::kFp16 || kind.precision == Precision::kTf32;
    return kind.cls == KernelClass::kGemm && tensor_core && (contains(name, "align1") || contains(name, "align2"));
  });
  const int64_t time = c.perStep(s.time_ns);
  if (s.count == 0) return std::nullopt;
  const bool tf32 = c.kindOf(s.first).precision == Precision::kTf32;
  const double slowdown = tf32 ? kUnalignedTf32Slowdown : kUnalignedHalfSlowdown;
  const int64_t saved = static_cast<int64_t>(static_cast<double>(time) * (1.0 - 1.0 / slowdown));
  // What padding saves, not the GEMMs' time, must reach the threshold: a speech model's TF32 convolutions over 249
  // frames ran as align1 GEMMs for 2.3 % of its step, and padding would have saved 1.3 %, under any re-run's noise
  // (audio_conformer_ctc_fp32, H200, 2026-11-30).
  if (c.shareOfStep(saved) < 0.02) return std::nullopt;
  Finding f = startFinding(c, kRules[2]);
  f.title = "GEMMs on unaligned shapes take " + formatDuration(time) + " " + perStepWords(c);
  f.summary = "cuBLAS fell back to alignment-1/2 kernels: a GEMM dimension is not a multiple of 8 elements.";
  f.evidence.push_back({perStepCount(c, s.count) + " unaligned GEMMs " + perStepWords(c) + ", " + formatDuration(time) +
                            " (" + formatShare(c.shareOfStep(time)) + ")",
                        {s.firstRef(c, "first unaligned GEMM")}});
  f.evidence.push_back({"among them " + join(s.names), {}});
  f.gain = timeGain(c, saved,
                    "the unaligned GEMMs' time divided by " + formatFixed(slowdown, 1) +
                        ": on an H100 the same GEMMs ran 5.6-5.8× (bf16) and 2.3× (TF32) faster once N was padded to a "
                        "multiple of 64 (docs/benchmarks.md)");
  if (c.framework == Framework::kPyTorch) {  // torch.compile pads GEMM operands itself (Inductor's shape padding)
    f.fix.summary += " torch.compile pads the GEMMs it compiles, with no code change.";
    f.fix.plan.push_back({"gemm_padding-1", "gemm_padding", f.id, {}});
  }
  setSeverity(f);
  return f;
}

// The kernels of the step device's streams inside the steps, each stream's in time order.
std::vector<std::vector<size_t>> streamsInSteps(const Context& c) {
  std::vector<std::vector<size_t>> by_stream(c.trace.streams.size());
  for (size_t i = 0; i < c.trace.kernels.size(); ++i) {
    if (c.inSteps(i) && c.trace.kernels.stream[i] != analysis::kNone) {
      by_stream[static_cast<size_t>(c.trace.kernels.stream[i])].push_back(i);
    }
  }
  return by_stream;
}

bool isSoftmax(const Context& c, size_t kernel, bool backward) {
  if (c.kindOf(kernel).cls != KernelClass::kNormalization) return false;
  const std::string name = lower(c.trace.kernelName(kernel));
  const bool bwd = contains(name, "backward") || contains(name, "bwd");
  return contains(name, "softmax") && !contains(name, "logsoftmax") && !contains(name, "log_softmax") &&
         bwd == backward;
}

// Looks from position `from` in direction `step` (±1) for a GEMM within `reach` kernels, past only elementwise
// kernels and copies (attention's scale, mask, dropout and casts); returns its position or -1. A reduction or a
// normalisation in between is a classifier's softmax, read by a max or a loss, not attention's.
int64_t gemmNear(const Context& c, const std::vector<size_t>& list, int64_t from, int step, int reach) {
  for (int64_t p = from + step, n = 0; p >= 0 && p < static_cast<int64_t>(list.size()) && n < reach; p += step, ++n) {
    const auto& kind = c.kindOf(list[static_cast<size_t>(p)]);
    if (kind.cls == KernelClass::kGemm) return p;
    if (kind.cls != KernelClass::kElementwise && kind.cls != KernelClass::kCopy) return -1;
  }
  return -1;
}

constexpr int kAttentionReach = 8;

std::optional<Finding> unfusedAttention(const Context& c) {
  KernelSet removable, softmaxes;
  for (const auto& list : streamsInSteps(c)) {
    for (int64_t p = 0; p < static_cast<int64_t>(list.size()); ++p) {
      const size_t k = list[static_cast<size_t>(p)];
      if (isSoftmax(c, k, true)) removable.add(c, k);
      if (!isSoftmax(c, k, false)) continue;
      // nanoGPT's attention under autocast runs scale, mask, masked_fill and a cast to fp32 before the softmax,
      // dropout and two casts after it: up to 8 memory-bound kernels either side.
      const int64_t before = gemmNear(c, list, p, -1, kAttentionReach),
                    after = gemmNear(c, list, p, +1, kAttentionReach);
      if (before < 0 || after < 0) continue;
      softmaxes.add(c, k);
      for (int64_t q = before + 1; q < after; ++q) removable.add(c, list[static_cast<size_t>(q)]);
    }
  }
  const int64_t time = c.perStep(removable.time_ns);
  if (softmaxes.count == 0 || c.shareOfStep(time) < 0.01) return std::nullopt;
  Finding f = startFinding(c, kRules[3]);
  f.title =
      "Attention is written out: " + perStepCount(c, softmaxes.count) + " GEMM-softmax-GEMM chains " + perStepWords(c);
  f.summary =
      "The attention scores are materialised in device memory, scaled, masked and soft-maxed by separate "
      "kernels between two GEMMs, and soft-maxed back in the backward pass.";
  f.evidence.push_back({perStepCount(c, softmaxes.count) + " softmax kernels between two GEMMs " + perStepWords(c),
                        {softmaxes.firstRef(c, "first written-out attention softmax")}});
  f.evidence.push_back(
      {"the scale, mask and softmax kernels around them and softmax's backward: " + perStepCount(c, removable.count) +
           " kernels, " + formatDuration(time) + " " + perStepWords(c),
       {}});
  f.gain = timeGain(c, time,
                    "the time of the kernels between the two GEMMs and of softmax's backward, which fused attention "
                    "removes; the GEMMs are assumed to cost the same (fused attention is usually faster there too)");
  f.fix.plan.push_back({"attention-1", "attention", f.id, {{"setting", std::string("sdpa")}}});
  setSeverity(f);
  return f;
}

// Measured on an H100 (tests/bench/optimizer_step.py): a per-parameter Adam step 4.6-5.3× slower than foreach
// and 5.4-13.4× slower than fused; the low end taken.
constexpr double kPerParameterOptimizerSlowdown = 4.5;

std::optional<Finding> unfusedOptimizer(const Context& c) {
  const PhaseWork w = c.phaseWork(analysis::Phase::kOptimizer);
  if (w.ranges == 0 || w.kernels / w.ranges < 64 || w.multi_tensor * 2 >= w.kernels) return std::nullopt;
  const int64_t per_step = w.span_ns / w.ranges;
  const int64_t saved =
      static_cast<int64_t>(static_cast<double>(per_step) * (1.0 - 1.0 / kPerParameterOptimizerSlowdown));
  Finding f = startFinding(c, kRules[4]);
  f.title = "The optimizer step launches " + formatCount(w.kernels / w.ranges) + " kernels, one set per parameter";
  f.summary = "The optimizer updates each parameter tensor with its own handful of small kernels.";
  const std::string where = c.optimizer_inferred ? "between each backward's end and the next forward (no torch.optim "
                                                   "optimizer ran: the script updates the weights in its own code)"
                                                 : "per optimizer step";
  f.evidence.push_back(
      {formatCount(w.kernels / w.ranges) + " kernels " + where + ", " + formatCount(w.multi_tensor / w.ranges) +
           " of them multi-tensor; their GPU span is " + formatDuration(per_step) + " per step",
       {{"nvtx_range", c.optimizer_inferred ? "after backward" : "optimizer", w.first_start_ns, w.first_end_ns}}});
  f.gain = timeGain(c, saved,
                    "the optimizer phase's GPU span divided by " + formatFixed(kPerParameterOptimizerSlowdown, 1) +
                        ": on an H100 a per-parameter Adam step ran 4.6-5.3× slower than foreach and 5.4-13.4× slower "
                        "than fused (docs/benchmarks.md)");
  // The span holds launch gaps as well as kernels; the gain is taken from both in proportion.
  const double idle_share =
      w.span_ns > 0 ? static_cast<double>(std::max<int64_t>(0, w.span_ns - w.kernel_ns)) / w.span_ns : 0.0;
  f.gain.idle_ns = static_cast<int64_t>(static_cast<double>(f.gain.time_ns) * idle_share);
  // gpuscope apply makes torch.optim's optimizers fused; an update the script wrote is changed by hand.
  if (c.optimizer_inferred) {
    f.fix.summary =
        "Replace the hand-written update with torch.optim's fused optimizer, or write it with "
        "torch._foreach_* ops (one kernel for many tensors).";
  } else {
    f.fix.plan.push_back({"optimizer-1", "optimizer", f.id, {{"setting", std::string("fused")}}});
  }
  setSeverity(f);
  return f;
}

// cuDNN's own transposes around a convolution it runs in NHWC. Their time is the gain: with channels-last
// tensors the same convolution kernels run without them (the convolutions themselves counted unchanged).
// torch.compile lays a model's convolutions out channels-last itself (Inductor's layout optimisation): compiled
// in bf16 on an H100, the torchvision ResNet-50's 87 transposes a step were gone (2026-11-27, after `apply`).
std::optional<Finding> convolutionLayout(const Context& c) {
  if (c.framework == Framework::kJax) return std::nullopt;  // XLA lays its tensors out itself: nothing to change
  KernelSet s;
  for (size_t k : c.layoutTransforms()) s.add(c, k);
  const int64_t time = c.perStep(s.time_ns);
  if (s.count == 0 || c.shareOfStep(time) < 0.05) return std::nullopt;
  Finding f = startFinding(c, kRules[5]);
  f.title = "cuDNN transposes NCHW tensors to NHWC and back: " + formatDuration(time) + " " + perStepWords(c);
  f.summary =
      "The convolutions' tensors are NCHW; cuDNN runs its convolutions in NHWC and converts each tensor "
      "before and after.";
  f.evidence.push_back({perStepCount(c, s.count) + " layout transforms " + perStepWords(c) + ", " +
                            formatDuration(time) + " (" + formatShare(c.shareOfStep(time)) + " of the step), " +
                            join(s.names),
                        {s.firstRef(c, "first layout transform")}});
  f.gain = timeGain(c, time,
                    "the layout transforms' time, which channels-last tensors do not need; the convolutions and "
                    "other kernels counted as they ran");
  if (c.framework == Framework::kPyTorch && c.modelRan()) {
    f.fix.summary += " torch.compile does it for the convolutions it compiles, with no code change.";
    f.fix.plan.push_back({"layout-1", "fusion", f.id, {}});  // the one torch.compile of the model
  }
  setSeverity(f);
  return f;
}

}  // namespace

std::span<const Rule> kernelRules() { return kRules; }

}  // namespace gpuscope::advisor
