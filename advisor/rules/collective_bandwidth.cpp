// collective_bandwidth: NCCL's large operations reach a small part of what the GPUs' NVLink carries. The
// usual cause is a setting, not the program's code: NCCL_P2P_DISABLE=1 left in a script written for boards
// where peer-to-peer hangs sends every byte through host memory; a container without a shared IPC namespace,
// NCCL_P2P_LEVEL, or a cap on NCCL's channels does the same or less. The sizes and NCCL's choices come from its
// profiler plugin (the trace's `collective` table), the link from CUPTI's NVLink records.
#include <algorithm>
#include <map>

#include "advisor/host_work.h"
#include "advisor/rule.h"
#include "analyzer/collectives.h"
#include "analyzer/units.h"

namespace gpuscope::advisor {

using analysis::formatBytes;
using analysis::formatCount;
using analysis::formatDuration;
using analysis::formatFixed;
using analysis::formatShare;

namespace {

// Below this an operation's time is mostly NCCL's latency, whatever the link (bench/nccl/busbw_sweep.py on
// 2 x H100 with NVLink: 25 GB/s at 1 MiB against 211-298 GB/s at 16-256 MiB for AllReduce).
constexpr int64_t kJudgedBytes = 8 << 20;
// NCCL reaches half of the link's one-way bandwidth at these sizes: bus bandwidth over CUPTI's NVLink figure
// (425 GB/s each way between two H100s), median of AllReduce, AllGather and ReduceScatter at 16, 64 and
// 256 MiB (0.34-0.70; docs/multi-rank.md, 2 x H100, 2026-11-27). The fitted constant of this rule.
constexpr double kReachableShare = 0.5;
// It fires below half of that: with peer-to-peer off the same sweep reached 25-27 GB/s (6 %).
constexpr double kSlowShare = 0.25;
constexpr double kGainShare = 0.05;

std::optional<Finding> collectiveBandwidth(const Context& c);

constexpr Rule kRule = {
    .id = "collective_bandwidth",
    .title = "Collectives reach a small part of the GPUs' link bandwidth",
    .reads =
        "NCCL's operations of the timed steps (the trace's collective table, from NCCL's profiler plugin) joined "
        "to their kernels, the shortest kernel over the ranks as each one's time; CUPTI's NVLink records",
    .fires_when =
        "operations of 8 MiB or more reach a bus bandwidth (as nccl-tests defines it) below a quarter of the "
        "GPUs' NVLink bandwidth in one direction, and reaching half of it would save 5 % of the step or more",
    .why =
        "Each collective holds the step until its data has crossed between the GPUs; at a tenth of the link's "
        "speed the gradients' all-reduce outlasts the backward it should hide behind.",
    .fix =
        "Let NCCL use the GPUs' direct link: remove NCCL_P2P_DISABLE (and NCCL_P2P_LEVEL, NCCL_SHM_DISABLE, caps "
        "on NCCL's channels), and give containers a shared IPC namespace (--ipc=host).",
    .snippets = {"# at the top of the script, or in the launcher's environment:\n"
                 "os.environ.pop(\"NCCL_P2P_DISABLE\", None)  # P2P over NVLink; set it only where P2P hangs",
                 "os.environ.pop(\"NCCL_P2P_DISABLE\", None)  # before jax.distributed.initialize()", "",
                 "unset NCCL_P2P_DISABLE  # in the job script, before mpirun/srun"},
    .verify =
        "Record again: `gpuscope stats --report collectives` shows the large operations near the link's "
        "bandwidth and more channels, and `gpuscope stats --report ranks` less communication alone.",
    .check = collectiveBandwidth};

struct OpSummary {
  int64_t count = 0, bytes = 0, bus_bytes = 0, time_ns = 0;
};

// The settings that keep NCCL off the direct link or slow it down, as the process had them.
std::vector<std::string> limitingSettings(const Context& c) {
  std::vector<std::string> found;
  for (std::string_view name : {"NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL", "NCCL_SHM_DISABLE", "NCCL_MAX_NCHANNELS",
                                "NCCL_MAX_CTAS", "NCCL_ALGO", "NCCL_PROTO"}) {
    const std::string value = c.trace.environmentValue(c.session, name);
    const bool off = (name == "NCCL_P2P_DISABLE" || name == "NCCL_SHM_DISABLE") && value == "0";
    if (!value.empty() && !off) found.push_back(std::string(name) + "=" + value);
  }
  return found;
}

// NCCL's large operations of the timed steps on `c.session`, against the link.
struct LinkUse {
  analysis::GpuLink link;
  double each_way = 0;  // bytes/s
  std::map<std::string_view, OpSummary> by_op;
  OpSummary all;
  int64_t saved_ns = 0;  // over the timed steps: each operation's time above what half the link would take
  int64_t channels = 0;
  double achieved() const {
    return all.time_ns > 0 ? static_cast<double>(all.bus_bytes) * 1e9 / static_cast<double>(all.time_ns) : 0;
  }
  bool slow() const { return all.count > 0 && achieved() < kSlowShare * each_way; }
};

std::optional<LinkUse> linkUse(const Context& c) {
  const std::optional<analysis::GpuLink> link = analysis::nvlinkOf(c.trace, c.device);
  if (!link || link->bytes_per_s_each_way <= 0) return std::nullopt;
  LinkUse u{*link, static_cast<double>(link->bytes_per_s_each_way)};
  for (const analysis::CollectiveOp& op : c.collectives) {
    const auto bus_bytes = static_cast<int64_t>(op.busBytes());
    if (op.session != c.session || bus_bytes <= 0 || op.bytes < kJudgedBytes || !c.inTimedSteps(op.kernel)) continue;
    for (OpSummary* s : {&u.by_op[op.operation], &u.all}) {
      ++s->count;
      s->bytes += op.bytes;
      s->bus_bytes += bus_bytes;
      s->time_ns += op.transfer_ns;
    }
    const auto expected = static_cast<int64_t>(static_cast<double>(bus_bytes) * 1e9 / (kReachableShare * u.each_way));
    u.saved_ns += std::max<int64_t>(0, op.transfer_ns - expected);
    u.channels = std::max(u.channels, op.channels);
  }
  if (u.all.count == 0 || u.all.time_ns <= 0) return std::nullopt;
  return u;
}

std::optional<Finding> collectiveBandwidth(const Context& c) {
  const std::optional<LinkUse> use = linkUse(c);
  if (!use || !use->slow()) return std::nullopt;
  const double each_way = use->each_way, achieved = use->achieved();
  const analysis::GpuLink& link = use->link;
  // What the faster transfers win: the communication now exposed (not the waits for a later rank), at most.
  const analysis::RankStep* self = c.ownRank();
  const int64_t exposed =
      self ? std::max<int64_t>(0, self->comm_alone_ns - self->wait_ns) : c.perTimedStep(use->saved_ns);
  const int64_t gain = std::min({c.perTimedStep(use->saved_ns), exposed, gpuSlack(c)});
  if (c.shareOfStep(gain) < kGainShare) return std::nullopt;

  Finding f = startFinding(c, kRule);
  const auto gbps = [](double bytes_per_s) { return formatFixed(bytes_per_s / 1e9, 1) + " GB/s"; };
  f.title = "NCCL's large collectives reach " + gbps(achieved) + " of the NVLink's " + gbps(each_way) + " (" +
            formatShare(achieved / each_way) + ")";
  f.summary = "Gradients and parameters cross between the GPUs far slower than their link allows.";
  f.evidence.push_back({"bus bandwidth " + gbps(achieved) + " over " + formatCount(use->all.count) +
                            " operations of 8 MiB or more in the timed steps (" + formatBytes(use->all.bytes) + ", " +
                            formatDuration(use->all.time_ns) + ", each timed by its shortest kernel over the ranks)",
                        {}});
  for (const auto& [op, s] : use->by_op) {
    f.evidence.push_back({std::string(op) + ": " + formatCount(s.count) + " × " + formatBytes(s.bytes / s.count) +
                              " on average, " +
                              gbps(static_cast<double>(s.bus_bytes) * 1e9 / static_cast<double>(s.time_ns)),
                          {}});
  }
  f.evidence.push_back({"the link: NVLink " + std::to_string(link.version) + ", " + std::to_string(link.links) +
                            " links" + (link.through_nvswitch ? " through NVSwitch" : "") + ", " + gbps(each_way) +
                            " each way (CUPTI's figure for both directions, halved); NCCL " +
                            "reaches about half of it at these sizes",
                        {}});
  f.evidence.push_back({"NCCL ran them on at most " + std::to_string(use->channels) + " channels", {}});
  const std::vector<std::string> settings = limitingSettings(c);
  for (const std::string& s : settings) f.evidence.push_back({"set in the program's environment: " + s, {}});
  if (!settings.empty()) {
    std::string list;
    for (const std::string& s : settings) list += (list.empty() ? "" : ", ") + s;
    f.fix.summary = "Remove " + list +
                    " from the program's environment (the script or its launcher) so NCCL uses the GPUs' direct "
                    "link; set it only on machines where peer-to-peer hangs.";
  } else {
    f.fix.summary =
        "Find what keeps NCCL off the direct link: run once with NCCL_DEBUG=INFO and look for the transport "
        "(\"via P2P\" or \"via SHM\"); in a container, share the host's IPC namespace (--ipc=host).";
  }
  f.gain = timeGain(c, gain,
                    "each operation of 8 MiB or more at half the link's one-way bandwidth (what NCCL reached on "
                    "2 x H100 at 16-256 MiB), the time above that saved; no more than the communication now "
                    "alone on the timeline, less the waits for other ranks, nor the step less the host's own work");
  setSeverity(f);
  return f;
}

}  // namespace

bool collectivesFarBelowLink(const Context& c) {
  const std::optional<LinkUse> use = linkUse(c);
  return use && use->slow();
}

const Rule& collectiveBandwidthRule() { return kRule; }

}  // namespace gpuscope::advisor
