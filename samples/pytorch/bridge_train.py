"""A small GPT-2 (transformers GPT2Config: 2 layers, 256 wide, vocabulary 8,192) trained for a few steps
with AdamW on random tokens served by a DataLoader with two forked workers: the program gpuscope's PyTorch
bridge is checked on (`gpuscope record --torch`). Deterministic: it prints the same losses with or
without gpuscope. --snapshot FILE records PyTorch's own memory history and saves the snapshot: pickled
for a .pickle file, as torch.cuda.memory._dump_snapshot() writes it, else as JSON. --profile FILE runs it
under torch.profiler (CUDA activity and memory) and saves its Chrome trace, as a user would for `gpuscope
import`."""

import argparse
import json

import torch


def batches(steps, batch, tokens, vocab):
    generator = torch.Generator().manual_seed(0)
    data = torch.randint(0, vocab, (steps * batch, tokens), generator=generator)
    return torch.utils.data.DataLoader(data, batch_size=batch, num_workers=2)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--snapshot", action="append", default=[],
                        help="write the memory snapshot here: pickled by _dump_snapshot() for a .pickle file, "
                             "else as JSON (may be given twice: both come from the same moment)")
    parser.add_argument("--profile", help="write a torch.profiler Chrome trace here")
    args = parser.parse_args()
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.use_deterministic_algorithms(True, warn_only=True)
    if args.snapshot:
        torch.cuda.memory._record_memory_history(context="alloc", stacks="python", max_entries=1_000_000)
    config = GPT2Config(n_layer=2, n_embd=256, n_head=4, n_positions=128, vocab_size=8192)
    model = GPT2LMHeadModel(config).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    profiler = None
    if args.profile:
        activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        profiler = torch.profiler.profile(activities=activities, profile_memory=True)
        profiler.start()
    for step, tokens in enumerate(batches(args.steps, 4, 128, config.vocab_size)):
        tokens = tokens.cuda()
        loss = model(tokens, labels=tokens).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(f"step {step} loss {loss.item():.6f}")
        if profiler:
            profiler.step()
    if profiler:
        profiler.stop()
        profiler.export_chrome_trace(args.profile)
    for path in args.snapshot:
        if path.endswith(".pickle"):
            torch.cuda.memory._dump_snapshot(path)
        else:
            with open(path, "w") as f:
                json.dump(torch.cuda.memory._snapshot(), f)


if __name__ == "__main__":
    main()
