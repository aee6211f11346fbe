"""Runs a program whose model a torchvision builder makes, and prints the time from each of the model's calls to
the next (the device synchronised at each call's start): where a fix's one-off cost (a compilation, a first run)
falls among a short program's timed calls, which its own clock sums. Works as written and under `gpuscope apply`.

  python3 bench/eval/call_times.py detection.fasterrcnn_mobilenet_v3_large_fpn \\
      bench/corpus/tv_fasterrcnn_infer/program.py
  gpuscope apply --plan PLAN -- python3 bench/eval/call_times.py BUILDER PROGRAM
Seen on an H200 (2026-11-28, docs/apply-results.md): plain 819, 27.5, 26.6, 26.3 ... ms; under `apply` as it was
then, 860, 19875 (the compile), 5336 (compiled again at the first timed call), 40.3, 25.5 ... ms.
"""

import atexit
import runpy
import sys
import time

import torch
import torchvision


def main():
    path, program = sys.argv[1], sys.argv[2]
    sys.argv = sys.argv[2:]
    *modules, name = path.split(".")
    owner = torchvision.models
    for module in modules:
        owner = getattr(owner, module)
    build, starts = getattr(owner, name), []

    def timed_build(*args, **kwargs):
        model = build(*args, **kwargs)

        def at_call(module, args):
            torch.cuda.synchronize()
            starts.append(time.perf_counter())

        model.register_forward_pre_hook(at_call)
        return model

    setattr(owner, name, timed_build)  # the program looks the builder up when it calls it
    atexit.register(lambda: print("ms from one call to the next:",
                                  " ".join(f"{(b - a) * 1e3:.1f}" for a, b in zip(starts, starts[1:]))))
    runpy.run_path(program, run_name="__main__")


if __name__ == "__main__":
    main()
