"""What checkpointing a model's blocks costs a training step, and which part of it: the blocks' forward under
torch.utils.checkpoint (non-reentrant) as it is, without preserving the random-number state, and with the
contexts gpuscope apply adds (the blocks' buffers put back after the recomputation). For corpus programs that
build `model`, `optimizer`, `train_step` and `train_data` before their `warmup_steps, timed_steps` line
(bench/corpus/trap_checkpoint_side_effects). Run on the GPU machine:
  python3 bench/eval/checkpoint_cost.py bench/corpus/trap_checkpoint_side_effects/program.py
"""

import contextlib
import pathlib
import sys
import time

import torch
from torch.utils.checkpoint import checkpoint

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "advisor" / "runtime" / "python"))
from gpuscope_torch.apply import _BuffersPutBack  # noqa: E402  (the bridge's own; nothing is installed by it)


def main():
    source = open(sys.argv[1]).read().split("warmup_steps, timed_steps")[0]
    scope = {"__name__": "program"}
    exec(compile(source, sys.argv[1], "exec"), scope)
    model, train_step, data = scope["model"], scope["train_step"], scope["train_data"]
    blocks = list(model.blocks)
    written = [b.forward for b in blocks]

    def ms_per_step(steps=20):
        for i in range(3):
            train_step(*data[i % len(data)])
        torch.cuda.synchronize()
        start = time.perf_counter()
        for i in range(steps):
            train_step(*data[i % len(data)])
        torch.cuda.synchronize()
        return round((time.perf_counter() - start) / steps * 1e3, 3)

    def wrap(buffers=False, **options):
        for block, forward in zip(blocks, written):
            kwargs = dict(options)
            if buffers:
                kwargs["context_fn"] = lambda b=block: (contextlib.nullcontext(), _BuffersPutBack(list(b.buffers())))
            block.forward = lambda *a, f=forward, k=kwargs: checkpoint(f, *a, use_reentrant=False, **k)

    print("as written", [ms_per_step() for _ in range(2)])
    wrap()
    print("checkpoint", [ms_per_step() for _ in range(2)])
    wrap(preserve_rng_state=False)
    print("checkpoint, rng state not kept", [ms_per_step() for _ in range(2)])
    wrap(buffers=True)
    print("checkpoint, buffers put back", [ms_per_step() for _ in range(2)])
    for block, forward in zip(blocks, written):
        block.forward = forward
    print("as written again", [ms_per_step() for _ in range(2)])


if __name__ == "__main__":
    main()
