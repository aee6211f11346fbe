#include "analyzer/fusion_chains.h"

#include <algorithm>
#include <map>

#include "analyzer/phases.h"

namespace gpuscope::analysis {

namespace {

// Device bandwidth when the trace does not record it (an H100 SXM's 3.35 TB/s).
constexpr double kDefaultBandwidth = 3.35e12;

struct Chain {
  FusionKind kind;
  std::vector<size_t> kernels;  // indexes into trace.kernels, in stream order
};

constexpr int32_t kExcluded = kNone;  // warm-up, set-up and teardown kernels are not part of any pattern
// A GPU gap longer than this between two kernels means the host did something else in between (loading
// data, synchronising): the kernels are not one chain, and the gap is not what fusion saves.
constexpr int64_t kMaxGapNs = 1'000'000;

// Which steady iteration each kernel ran in (by its GPU start); kExcluded for warm-up iterations, outside all
// iterations and outside the windows (where there are some). All 0 without iterations, so chains then only
// break at other work.
std::vector<int32_t> iterationOfKernels(const TraceData& t, const Iterations& iterations,
                                        const std::vector<Interval>& windows) {
  std::vector<int32_t> of(t.kernels.size(), 0);
  for (size_t k = 0; k < of.size(); ++k) {
    const int64_t start = t.kernels.start_ns[k];
    if (!iterations.list.empty()) of[k] = iterations.steadyIterationAt(start);
    if (!windows.empty() && !insideAny(windows, start)) of[k] = kExcluded;
  }
  return of;
}

// The innermost NVTX range open on the launching thread when each kernel was launched (kNone: none, or
// no launch call recorded). One sweep per thread with a stack of open ranges. The PyTorch bridge's module
// ranges do not count: they are gpuscope's, not the program's, and a compiler fuses across modules.
std::vector<int32_t> rangeOfKernels(const TraceData& t) {
  std::vector<int32_t> of(t.kernels.size(), kNone);
  std::map<std::pair<int32_t, int64_t>, std::vector<int32_t>> ranges;  // per (session, thread), by start
  for (size_t r = 0; r < t.nvtx.size(); ++r) {
    if (t.nvtx.kind[r] == schema::NvtxKind::kRange && !isBridgeRange(t.text(t.nvtx.name[r]))) {
      ranges[{t.nvtx.session[r], t.nvtx.thread_id[r]}].push_back(static_cast<int32_t>(r));
    }
  }
  if (ranges.empty()) return of;
  std::map<std::pair<int32_t, int64_t>, std::vector<size_t>> launches;
  for (size_t k = 0; k < t.kernels.size(); ++k) {
    const int32_t call = t.kernels.launch_call[k];
    if (call != kNone) launches[{t.kernels.session[k], t.api_calls.thread_id[call]}].push_back(k);
  }
  for (auto& [key, kernels] : launches) {
    const std::vector<int32_t>& rs = ranges[key];
    auto launched = [&](size_t k) { return t.api_calls.start_ns[t.kernels.launch_call[k]]; };
    std::stable_sort(kernels.begin(), kernels.end(), [&](size_t a, size_t b) { return launched(a) < launched(b); });
    std::vector<int32_t> open;
    size_t next = 0;
    for (size_t k : kernels) {
      const int64_t time = launched(k);
      while (next < rs.size() && t.nvtx.start_ns[rs[next]] <= time) open.push_back(rs[next++]);
      while (!open.empty() && t.nvtx.end_ns[open.back()] <= time) open.pop_back();
      if (!open.empty()) of[k] = open.back();
    }
  }
  return of;
}

// Whether the thread that launched kernel `before` made a CUDA call other than a launch (an allocation, a copy,
// a synchronisation) before launching `after`: host work between two kernels is not something fusion removes.
// Calls under a microsecond (cudaGetDevice, cudaGetLastError) do not count.
bool hostWorkBetween(const TraceData& t, size_t before, size_t after) {
  const int32_t a = t.kernels.launch_call[before], b = t.kernels.launch_call[after];
  if (a == kNone || b == kNone) return false;
  const ApiTable& api = t.api_calls;
  for (auto i = static_cast<size_t>(a) + 1; i < static_cast<size_t>(b); ++i) {
    if (api.thread_id[i] != api.thread_id[a] || api.end_ns[i] - api.start_ns[i] < 1'000) continue;
    if (t.text(api.name[i]).find("aunch") == std::string::npos) return true;
  }
  return false;
}

// Walks each stream's kernels and cuts them into chains: a run of memory-bound kernels, or a GEMM or
// convolution with the elementwise kernels right after it. Copies and memsets between kernels on the
// stream do not break a chain here (they are rare between fusable kernels); iterations, NVTX ranges (a
// kernel launched in another innermost range), host work between the launches and long gaps do.
std::vector<Chain> findChains(const TraceData& t, const std::vector<KernelKind>& kind,
                              const std::vector<int32_t>& iteration, const std::vector<int32_t>& range) {
  std::vector<std::vector<size_t>> by_stream(t.streams.size());
  for (size_t k = 0; k < t.kernels.size(); ++k) by_stream[t.kernels.stream[k]].push_back(k);
  std::vector<Chain> chains;
  for (const std::vector<size_t>& stream : by_stream) {
    Chain current{FusionKind::kMemoryBoundChain, {}};
    auto close = [&] {
      if (current.kernels.size() >= 2) chains.push_back(current);
      current.kernels.clear();
    };
    for (size_t k : stream) {
      if (iteration[k] == kExcluded) {
        close();
        continue;
      }
      const KernelKind& kk = kind[k];
      const bool compute = kk.cls == KernelClass::kGemm || kk.cls == KernelClass::kConvolution;
      const bool same_iteration =
          current.kernels.empty() ||
          (iteration[current.kernels.back()] == iteration[k] && range[current.kernels.back()] == range[k] &&
           t.kernels.start_ns[k] - t.kernels.end_ns[current.kernels.back()] <= kMaxGapNs &&
           !hostWorkBetween(t, current.kernels.back(), k));
      const bool extends =
          !current.kernels.empty() && same_iteration && current.kernels.size() < kMaxChainLength &&
          (current.kind == FusionKind::kGemmEpilogue ? kk.cls == KernelClass::kElementwise && kk.fusable()
                                                     : kk.fusable());
      if (extends) {
        current.kernels.push_back(k);
        continue;
      }
      close();
      if (compute) {
        current = {FusionKind::kGemmEpilogue, {k}};
      } else if (kk.fusable()) {
        current = {FusionKind::kMemoryBoundChain, {k}};
      }
    }
    close();
  }
  return chains;
}

std::string basisText(FusionKind kind, double bandwidth) {
  const std::string gbps = std::to_string(static_cast<int64_t>(bandwidth / 1e9));
  if (kind == FusionKind::kGemmEpilogue) {
    return "the elementwise kernels' time and the GPU idle time before them, applied instead in the GEMM's epilogue "
           "(cuBLASLt and cuDNN fuse bias and activations); bytes: their traffic at " +
           gbps + " GB/s";
  }
  return "a fused kernel still reads the chain's inputs and writes its outputs, about as long as its longest member; "
         "the rest of the members' time is intermediate tensors written and read back (bytes at " +
         gbps + " GB/s, the device's bandwidth), and the GPU idle time between members goes with their launches";
}

// Adds one occurrence of a chain to its pattern.
void addOccurrence(const TraceData& t, const Chain& chain, double bandwidth, FusionPattern& p) {
  int64_t total = 0, longest = 0, gaps = 0, epilogue = 0;
  for (size_t i = 0; i < chain.kernels.size(); ++i) {
    const size_t k = chain.kernels[i];
    const int64_t d = t.kernels.end_ns[k] - t.kernels.start_ns[k];
    total += d;
    longest = std::max(longest, d);
    if (i > 0) {
      gaps += std::max<int64_t>(0, t.kernels.start_ns[k] - t.kernels.end_ns[chain.kernels[i - 1]]);
      epilogue += d;
    }
  }
  const int64_t traffic_ns = chain.kind == FusionKind::kGemmEpilogue ? epilogue : total - longest;
  if (p.occurrences++ == 0) p.first_occurrence = chain.kernels;
  p.kernel_time_ns += total;
  p.gap_time_ns += gaps;
  p.saving_ns += traffic_ns + gaps;
  p.launches_removed += static_cast<int64_t>(chain.kernels.size()) - 1;
  p.intermediate_bytes += static_cast<int64_t>(static_cast<double>(traffic_ns) * 1e-9 * bandwidth);
}

}  // namespace

std::vector<FusionPattern> findFusableChains(const TraceData& trace, const Iterations& iterations, int32_t device,
                                             const std::vector<Interval>& windows) {
  const std::vector<KernelKind> kind_of_config = classifyConfigs(trace);
  std::vector<KernelKind> kind(trace.kernels.size());
  for (size_t k = 0; k < kind.size(); ++k) kind[k] = kind_of_config[trace.kernels.config[k]];
  const std::vector<Chain> chains =
      findChains(trace, kind, iterationOfKernels(trace, iterations, windows), rangeOfKernels(trace));

  std::map<std::pair<FusionKind, std::vector<int32_t>>, FusionPattern> patterns;  // by the members' names
  for (const Chain& chain : chains) {
    if (device != kNone && trace.kernels.device[chain.kernels[0]] != device) continue;  // a stream is on one device
    std::vector<int32_t> names;
    for (size_t k : chain.kernels) names.push_back(trace.configs[trace.kernels.config[k]].name.id);
    FusionPattern& p = patterns[{chain.kind, names}];
    const auto& gpu = trace.devices[trace.kernels.device[chain.kernels[0]]];
    const double bandwidth = gpu.memory_bandwidth_bytes_per_s.value_or(0) > 0
                                 ? static_cast<double>(*gpu.memory_bandwidth_bytes_per_s)
                                 : kDefaultBandwidth;
    if (p.occurrences == 0) {
      p.kind = chain.kind;
      for (size_t k : chain.kernels) {
        p.kernels.push_back(trace.kernelName(k));
        p.classes.push_back(kind[k].cls);
      }
      p.basis = basisText(chain.kind, bandwidth);
    }
    addOccurrence(trace, chain, bandwidth, p);
  }
  std::vector<FusionPattern> out;
  for (auto& [key, p] : patterns) out.push_back(std::move(p));
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.saving_ns > b.saving_ns; });
  return out;
}

std::string_view toString(FusionKind kind) {
  return kind == FusionKind::kGemmEpilogue ? "GEMM epilogue" : "memory-bound chain";
}

}  // namespace gpuscope::analysis
