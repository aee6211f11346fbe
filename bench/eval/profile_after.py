"""What a program's process looks like after its own timed steps: the question a `gpuscope apply` whose fix was
rolled back raises when the program still runs slower than plain (bench/corpus/trap_dynamic_shapes: 2.30-2.55
ms/step after its compile was rolled back at call 7, against 1.10-1.87 plain, H100, 2026-11-27). Runs the program
whole, then times 200 more of its steps, profiles 20 with torch.profiler (the CPU operators that took the most
time of their own, and how many) and prints what could be left in the process: global module hooks, a profile or
trace function, torch function and dispatch modes, threads, child processes, the CPUs it may run on.

For corpus programs that build `predict` and their inputs before their `warmup_steps, timed_steps` line. Run on
the GPU machine, plain and under `gpuscope apply` (the bridge finds the model the same way in both):
  python3 bench/eval/profile_after.py bench/corpus/trap_dynamic_shapes/program.py texts
"""

import os
import sys
import threading
import time

import torch


def main():
    path = sys.argv[1]
    scope = {"__name__": "__main__", "__file__": path}
    exec(compile(open(path).read(), path, "exec"), scope)  # the program as written, its timed steps included
    predict, inputs = scope["predict"], scope[sys.argv[2] if len(sys.argv) > 2 else "batches"]

    torch.cuda.synchronize()
    start = time.perf_counter()
    for i in range(200):
        predict(inputs[i % len(inputs)])
    torch.cuda.synchronize()
    print(f"after the program: {(time.perf_counter() - start) / 200 * 1e3:.3f} ms a step over 200 more steps")

    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for i in range(20):
            predict(inputs[i % len(inputs)])
        torch.cuda.synchronize()
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))
    left_over()


def left_over():
    """What the process holds that a plain one would not: hooks, modes, threads, children."""
    module = torch.nn.modules.module
    hooks = {name: len(getattr(module, name, {})) for name in dir(module) if name.startswith("_global_")
             and isinstance(getattr(module, name), dict)}
    print("global module hooks:", hooks)
    print("profile function:", sys.getprofile(), "trace function:", sys.gettrace())
    print("torch function mode:", torch._C._is_torch_function_mode_enabled(),
          "dispatch modes:", torch._C._len_torch_dispatch_stack())
    print("python threads:", [t.name for t in threading.enumerate()])
    print("os threads:", len(os.listdir("/proc/self/task")))
    children = [p for p in os.listdir("/proc") if p.isdigit() and _parent(p) == os.getpid()]
    print("child processes:", len(children))
    print("CPUs it may run on:", len(os.sched_getaffinity(0)), "loaded modules:", len(sys.modules),
          "dynamo loaded:", "torch._dynamo" in sys.modules)


def _parent(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


if __name__ == "__main__":
    main()
