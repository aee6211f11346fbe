// runtime_compilation: kernels compiled inside the steady steps. A library that compiles a kernel for each new
// shape (cuDNN's attention and fused graphs, Triton under torch.compile, XLA under jax.jit, NVRTC behind CuPy's
// kernels) does it once per shape; a loop whose shapes change every step (batches padded to their longest
// sequence) pays it every step, on the host, while the GPU waits. Seen on a DistilBERT fine-tune with dynamic
// padding on an H200 (bench/corpus/hf_distilbert_dynamic_padding, 2026-11-29): cuDNN's attention compiled a
// forward and a backward kernel for each new length, 58.9 ms a step plain against 21.6 with batches padded to a
// multiple of 64 and 22.4 with cuDNN's attention switched off (121 ms on a machine whose compile cache was cold).
// A library that loads kernels it has loaded before, for each plan or handle made in a step, costs the same way
// with no compile: a CUDA C++ FFT blur that made its two cuFFT plans for every frame loaded four modules a frame,
// 1.15 ms a frame against 0.115 with the plans made once (H200, bench/corpus/cuda_fft_plan_per_frame).
#include <algorithm>
#include <map>
#include <string>
#include <string_view>

#include "advisor/rule.h"
#include "analyzer/gpu_activity.h"
#include "analyzer/timeline_analysis.h"
#include "analyzer/units.h"

namespace gpuscope::advisor {

using analysis::formatDuration;

namespace {

std::string lowerCase(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return lower;
}

// The library that compiled a kernel, by the kernels launched right after its load: the first names the
// library; cuDNN's attention is named by any of them (its backward starts with a dO·O and a philox kernel).
std::string compilerOf(const std::vector<std::string>& kernels, Framework framework) {
  const std::string lower = kernels.empty() ? "" : lowerCase(kernels.front());
  if (lower.find("cudnn") != std::string::npos) {
    const bool attention = std::any_of(kernels.begin(), kernels.end(), [](const std::string& k) {
      return lowerCase(k).find("sdpa") != std::string::npos;
    });
    return attention ? "cuDNN's attention" : "cuDNN";
  }
  if (lower.starts_with("triton")) return "Triton (torch.compile)";
  if (lower.find("fft") != std::string::npos) return "cuFFT";
  if (lower.find("nvjet") != std::string::npos || lower.find("cutlass") != std::string::npos) return "cuBLAS";
  if (framework == Framework::kJax) return "XLA (jax.jit)";
  if (framework == Framework::kCuPy) return "CuPy";
  return "a library";
}

std::optional<Finding> runtimeCompilation(const Context& c);

constexpr Rule kRule = {
    .id = "runtime_compilation",
    .title = "Kernels are compiled inside the steps",
    .reads =
        "module loads (cuModuleLoadData, cuLibraryLoadData and the like) inside the steady steps after 1 ms or more "
        "of host time with no CUDA call on their thread (the compile), and XLA's own compile ranges (NVTX "
        "\"XlaCompile:#…#\", its autotuner's kernels inside them), and module loads with no such stretch before "
        "them (a library loading its kernels again for a plan or handle made anew); the kernels launched next "
        "(whose library compiled or loaded them), and the GPU's time during those stretches that is idle or the "
        "compiler's own",
    .fires_when =
        "a kernel compiled or a module loaded in at least every other steady step, and the GPU idles while the "
        "host compiles or loads for 3 % of the step or more",
    .why =
        "A library compiles a kernel once for each shape, function or constant it has not seen. When the shapes "
        "change from step to step (batches padded to their longest sequence, variable image sizes), or the step "
        "builds its function or kernel source anew, every step pays for a compile on the host, and the GPU waits.",
    .fix =
        "Compile once: give the steps a few fixed shapes (pad each batch to a multiple of 64 or to one of a few "
        "bucket lengths), build jitted functions and kernels once, outside the loop, and pass what changes as an "
        "argument; or use a kernel that needs no compile per shape.",
    .snippets =
        {"# pad each batch to a multiple of 64 tokens (DataCollatorWithPadding(tokenizer, pad_to_multiple_of=64))\n"
         "ids = torch.nn.functional.pad(ids, (0, -ids.shape[1] % 64), value=tokenizer.pad_token_id)\n"
         "# cuDNN's attention compiles per shape; flash attention does not:\n"
         "torch.backends.cuda.enable_cudnn_sdp(False)",
         "# jit once, outside the loop, with what changes as an argument (not jax.jit(lambda ...) per step)\n"
         "update = jax.jit(update)\n"
         "# jit compiles once per shape: pad to a few bucket lengths\n"
         "x = jnp.pad(x, ((0, 0), (0, -x.shape[1] % 64)))",
         "# build kernels once, at start-up; constants as arguments, not written into the source\n"
         "kernel = cp.ElementwiseKernel('float32 x, float32 alpha', 'float32 y', 'y = alpha * x', 'scale')",
         "// compile with NVRTC and cuModuleLoadData once, before the loop; keep the CUfunction"},
    .verify =
        "Record again: `gpuscope stats --report api` shows no cuModuleLoadData or cuLibraryLoadData calls inside "
        "the steps, and the GPU's idle time per step has fallen.",
    .check = runtimeCompilation};

// A finding for modules loaded with no compile before them: the library loads kernels it has loaded before, for
// each plan or handle the steps make anew.
void describeLoadsOnly(Finding& f, const std::string& library, int64_t gpu_idle) {
  f.title = "Kernels are loaded again inside the steps: the GPU waits " + formatDuration(gpu_idle) +
            " per step while " + library + " loads its kernels";
  f.summary =
      "The steps load kernel modules the program has loaded before, with nothing compiled first: a library's "
      "plan or handle made anew in each step loads its kernels again; the GPU idles meanwhile.";
  f.why =
      "A library's plan or handle (a cuFFT plan, a cuBLAS or cuDNN handle) loads the library's kernels into the "
      "context when it is made, and its destruction unloads them: made anew in each step, every step loads them "
      "again on the host while the GPU waits.";
  f.fix.summary =
      "Make the library's plans and handles once, before the loop, and reuse them in every step (" + library +
      (library == "cuFFT" ? ": cufftPlan*/cufftMakePlan* once, cufftExec* each step, cufftDestroy at the end)"
                          : ": cuBLAS, cuDNN, cuFFT and cuSPARSE handles and plans alike)");
  f.fix.snippet = library == "cuFFT" ? "cufftHandle plan;  // once, before the loop\n"
                                       "cufftPlan2d(&plan, ny, nx, CUFFT_R2C);\n"
                                       "for (int step = 0; step < steps; ++step) cufftExecR2C(plan, in, out);\n"
                                       "cufftDestroy(plan);  // once, after it"
                                     : "";
  f.fix.snippet_language = f.fix.snippet.empty() ? "" : "cuda";
}

std::optional<Finding> runtimeCompilation(const Context& c) {
  if (!c.step.from_iterations || c.device == analysis::kNone || c.session == analysis::kNone) return std::nullopt;
  std::map<std::string, int64_t> by_library;
  int64_t compiles = 0, compiled = 0, unloads = 0;
  for (const analysis::RuntimeCompile& compile : c.compiles) {
    if (!c.inTimedSteps(compile.stretch.end)) continue;
    if (compile.unloaded) {  // the same plans' destruction: its time counts below, the loads name the finding
      ++unloads;
      continue;
    }
    ++compiles;
    compiled += compile.compiled ? 1 : 0;
    ++by_library[compilerOf(compile.next_kernels, c.framework)];
  }
  const int64_t steps = std::max<int64_t>(1, c.step.timed_count);
  if (2 * compiles < steps) return std::nullopt;
  const std::vector<analysis::Interval> stretches = c.compilesInTimedSteps();
  // The GPU's time that is idle, or the compiler's own (XLA's autotuner's work): the steps lose both with the compile.
  const std::vector<analysis::Interval> idle =
      analysis::subtract(c.step.timed_windows, analysis::busyLaunchedOutside(c.trace, c.device, c.compiler_work));
  const int64_t host = c.perTimedStep(analysis::overlapLength(stretches, c.step.timed_windows));
  const int64_t gpu_idle = c.perTimedStep(analysis::overlapLength(stretches, idle));
  if (c.shareOfStep(gpu_idle) < 0.03) return std::nullopt;
  const auto most = std::max_element(by_library.begin(), by_library.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
  Finding f = startFinding(c, kRule);
  f.title = "Kernels are compiled inside the steps: the GPU waits " + formatDuration(gpu_idle) + " per step while " +
            most->first + " compiles";
  f.summary =
      "The steps load newly compiled kernels, each for a shape, function or constant not seen before; the GPU idles "
      "meanwhile.";
  if (compiled == 0) describeLoadsOnly(f, most->first, gpu_idle);
  std::string libraries;
  for (const auto& [library, n] : by_library) {
    libraries += (libraries.empty() ? "" : ", ") + perStepCount(n, steps) + " by " + library;
  }
  const std::string what = compiled == 0 ? "module loads" : "kernel compiles";
  f.evidence.push_back({perStepCount(compiles, steps) + " " + what + " per step (" + libraries + ")" +
                            (compiled > 0 && compiled < compiles
                                 ? "; " + perStepCount(compiles - compiled, steps) + " of them loads with no compile"
                                 : "") +
                            (unloads > 0 ? "; " + perStepCount(unloads, steps) + " module unloads" : ""),
                        {{"time_range", "first in the steps", stretches.front().start, stretches.front().end}}});
  const std::string loads = unloads > 0 ? "loads and unloads modules" : "loads modules";
  f.evidence.push_back({"the host " + (compiled == 0 ? loads : std::string("compiles")) + " for " +
                            formatDuration(host) + " per step (" +
                            (compiled == 0 ? std::string("from the launch before each load") +
                                                 (unloads > 0 ? " or unload" : "") + " to its end"
                                           : "the stretches with no CUDA call before each "
                                             "module load, and the loads") +
                            "), " + formatDuration(gpu_idle) + " of it with the GPU idle",
                        {stepRef(c)}});
  f.gain = timeGain(c, gpu_idle,
                    compiled == 0 ? "the GPU's idle time while the host loaded modules in the steady steps: with the "
                                    "plans and handles made once, their kernels are loaded once, before the steps"
                                  : "the GPU's idle time while the host compiled in the steady steps: with a few fixed "
                                    "shapes each kernel is compiled once, before the steps");
  f.gain.idle_ns = f.gain.time_ns;
  // cuDNN's attention is the one compiler PyTorch can be told to leave out: SDPA then runs flash or
  // memory-efficient attention, which compile nothing per shape (the DistilBERT fine-tune above: 22.4 ms).
  if (c.framework == Framework::kPyTorch && most->first == "cuDNN's attention") {
    f.fix.plan.push_back({"attention-2", "attention", f.id, {{"setting", std::string("no_cudnn_sdp")}}});
  }
  setSeverity(f);
  return f;
}

}  // namespace

const Rule& runtimeCompilationRule() { return kRule; }

}  // namespace gpuscope::advisor
