"""Whether a compile that is then given up leaves the eager model slower in the same process: the question a rolled
back `gpuscope apply` fix raises when the program runs slower afterwards. Times the model's eager steps, compiles
its forward for eight calls, puts the forward back and times the eager steps again (then after gc.freeze() and
after torch._dynamo.reset(), two suspects).

For corpus programs that build `model`, `predict` and `batches` before their `warmup_steps, timed_steps` line
(bench/corpus/trap_data_dependent; another name for the inputs as a second argument). Run on the GPU machine:
  python3 bench/eval/eager_after_compile.py bench/corpus/trap_data_dependent/program.py [texts]
Seen on an H100 (2026-11-27, docs/advisor-scorecard.md): eager 1.844, 0.914, 1.025 ms a step before the compile,
0.964, 0.947, 0.993 after it was put back.
"""

import gc
import sys
import time

import torch


def main():
    source = open(sys.argv[1]).read().split("warmup_steps, timed_steps")[0]
    scope = {"__name__": "program"}
    exec(compile(source, sys.argv[1], "exec"), scope)  # the program's model and batches, not its timed loop
    model, predict = scope["model"], scope["predict"]
    batches = scope[sys.argv[2] if len(sys.argv) > 2 else "batches"]  # the inputs' name (trap_dynamic_shapes: texts)

    def ms_per_step(steps=200):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for i in range(steps):
            predict(batches[i % len(batches)])
        torch.cuda.synchronize()
        return round((time.perf_counter() - start) / steps * 1e3, 3)

    def kernels_per_step(steps=3):
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for i in range(steps):
                predict(batches[i % len(batches)])
            torch.cuda.synchronize()
        ops = [e for e in prof.key_averages() if e.device_type == torch.autograd.DeviceType.CPU]
        top = sorted(ops, key=lambda e: -e.count)[:6]
        kernels = sum(e.count for e in prof.key_averages() if e.device_type == torch.autograd.DeviceType.CUDA)
        return kernels // steps, [(e.key, e.count // steps) for e in top]

    print("eager", [ms_per_step() for _ in range(3)], kernels_per_step())
    print("fast path of nn.MultiheadAttention and nn.Transformer*:", torch.backends.mha.get_fastpath_enabled())
    written = model.forward
    model.forward = torch.compile(model.forward)
    for i in range(8):
        predict(batches[i % len(batches)])
    print("compiled", [ms_per_step() for _ in range(2)])
    model.forward = written
    print("eager after the compile", [ms_per_step() for _ in range(3)], kernels_per_step())
    print("fast path of nn.MultiheadAttention and nn.Transformer*:", torch.backends.mha.get_fastpath_enabled())
    gc.freeze()
    print("eager after gc.freeze()", [ms_per_step() for _ in range(3)])
    torch._dynamo.reset()
    print("eager after torch._dynamo.reset()", [ms_per_step() for _ in range(3)])


if __name__ == "__main__":
    main()
