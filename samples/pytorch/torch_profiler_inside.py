"""A program that starts torch.profiler itself, for gpuscope's coexistence check: 200 elementwise kernels run in
an NVTX range "before", 200 inside torch.profiler ("inside") and 200 after it stopped ("after"). Under
`gpuscope record`, gpuscope holds CUPTI, so torch.profiler gets no CUDA events; the program must still run
normally and gpuscope must keep recording through all three ranges. Prints how many CUDA kernels
torch.profiler saw, as JSON. Exits 0 when the program ran (whatever the profilers saw).
"""
import json

import torch
from torch.profiler import ProfilerActivity, profile

nvtx = torch.cuda.nvtx


def work(n):
    x = torch.ones(1024, device="cuda")
    for _ in range(n):
        x = x * 1.0001
    torch.cuda.synchronize()


def main():
    work(1)  # CUDA initialised before the profiler, as in a real training script
    with nvtx.range("before"):
        work(200)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        with nvtx.range("inside"):
            work(200)
    with nvtx.range("after"):
        work(200)
    cuda_events = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
    print(json.dumps({"torch_profiler_cuda_events": cuda_events}))


if __name__ == "__main__":
    main()
