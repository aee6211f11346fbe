"""Holistic Trace Analysis on gpuscope's per-rank export of a 2-rank DDP job: each point of
../shared/HTA_COMPAT.md that HTA's analyses depend on, checked by running them. Exits non-zero on the first
analysis that fails or comes out empty."""

import logging
import sys
import warnings

warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)

from hta.trace_analysis import TraceAnalysis  # noqa: E402


def check(condition, what):
    if not condition:
        sys.exit(f"HTA on gpuscope's export: {what}")
    print(f"ok: {what}")


analysis = TraceAnalysis(trace_dir=sys.argv[1])
# One file per rank, each with its rank found by HTA's pattern for torch's distributedInfo.
check(sorted(analysis.t.traces.keys()) == [0, 1], "both ranks read, each from its own file")
for rank in (0, 1):
    # ProfilerStep#N ranges: the iterations HTA's per-iteration analyses use.
    check(len(analysis.t.get_iterations(rank)) >= 10, f"rank {rank}: ProfilerStep iterations found")

idle = analysis.get_idle_time_breakdown(ranks=[0, 1], visualize=False)[0]
check(set(idle["rank"]) == {0, 1} and idle["idle_time"].sum() > 0, "idle time breakdown of both ranks")
temporal = analysis.get_temporal_breakdown(visualize=False)
check(len(temporal) == 2 and (temporal["compute_time(us)"] > 0).all(), "temporal breakdown of both ranks")
# Communication kernels classed as such: NCCL's ncclDevKernel_* names.
overlap = analysis.get_comm_comp_overlap(visualize=False)
check(len(overlap) == 2 and (overlap["comp_comm_overlap_pctg"] > 0).all(), "communication/compute overlap")
# Launch statistics join CPU calls to kernels by correlation id, by the runtime's own call names.
launches = analysis.get_cuda_kernel_launch_stats(ranks=[0, 1], visualize=False)
check(all(len(launches.get(rank, [])) > 1000 for rank in (0, 1)), "kernel launch statistics of both ranks")

# NVTX ranges on the GPU timeline (gpu_user_annotation, as torch.profiler writes its record_function ranges), which
# HTA reads when its parser is told to keep them: the time on the GPU of each annotated phase, on both ranks.
from hta.configs.parser_config import ParserConfig  # noqa: E402

config = ParserConfig.get_default_cfg()
config.set_drop_gpu_user_annotation(False)
ParserConfig.set_default_cfg(config)
annotated = TraceAnalysis(trace_dir=sys.argv[1]).get_gpu_user_annotation_breakdown(visualize=False, num_kernels=100)
check(annotated is not None and set(annotated["rank"]) == {0, 1}
      and annotated["name"].str.contains("DistributedDataParallel").any(), "GPU time of the NVTX ranges of both ranks")
