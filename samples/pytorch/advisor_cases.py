"""Training loops with known problems, and the same loop with them fixed, for gpuscope's advisor.

  naive               a small GPT-style model trained the way a first draft is written: fp32 GEMMs off the
                      tensor cores (TF32 off, PyTorch's default), attention written out by hand (two batched
                      GEMMs with a softmax between), a vocabulary of 10,007 (not a multiple of 8), Adam with one
                      kernel per parameter (foreach=False), a DataLoader without workers whose batches take
                      10 ms of CPU time each, pageable host-to-device copies, and loss.item() after every
                      forward pass (a host synchronisation in the middle of the step)
  tuned               the same model and data with each of those fixed: bf16 autocast, scaled-dot-product
                      attention, a vocabulary padded to 10,048, fused AdamW, 8 DataLoader workers with pinned
                      memory, non-blocking copies, the loss kept on the GPU, torch.compile's fused kernels,
                      and the whole step (forward, backward, optimizer) replayed as one CUDA graph
  memory_activations  an MLP whose activations dominate peak memory (16,384 tokens per batch, SGD)
  memory_optimizer    an MLP whose Adam state dominates peak memory (256 tokens per batch)

The memory cases turn PyTorch's caching allocator off (PYTORCH_NO_CUDA_MEMORY_CACHING=1, set below before
torch loads), so that every tensor is its own cudaMalloc and CUDA sees each allocation.

Each step is an NVTX range "step" holding "forward", "backward" and "optimizer" ranges (tuned: "step" only,
as the step is one graph replay). Prints one JSON line with the median step time.
"""
import argparse
import json
import os
import statistics
import sys
import time

CASES = ["naive", "tuned", "memory_activations", "memory_optimizer"]
if len(sys.argv) > 1 and sys.argv[1].startswith("memory"):
    os.environ["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1"

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

SEQ, WIDTH, HEADS, LAYERS, BATCH = 256, 512, 8, 4, 16
nvtx = torch.cuda.nvtx


class Block(nn.Module):
    def __init__(self, fused_attention):
        super().__init__()
        self.fused_attention = fused_attention
        self.ln1, self.ln2 = nn.LayerNorm(WIDTH), nn.LayerNorm(WIDTH)
        self.qkv, self.proj = nn.Linear(WIDTH, 3 * WIDTH), nn.Linear(WIDTH, WIDTH)
        self.mlp = nn.Sequential(nn.Linear(WIDTH, 4 * WIDTH), nn.GELU(), nn.Linear(4 * WIDTH, WIDTH))
        self.register_buffer("mask", torch.ones(SEQ, SEQ, dtype=torch.bool).triu(1))

    def attention(self, q, k, v):
        if self.fused_attention:
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        scores = (q @ k.transpose(-2, -1)) * (q.shape[-1] ** -0.5)
        scores = scores.masked_fill(self.mask, float("-inf"))
        return scores.softmax(dim=-1) @ v

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (y.view(b, t, HEADS, c // HEADS).transpose(1, 2) for y in (q, k, v))
        y = self.attention(q, k, v).transpose(1, 2).reshape(b, t, c)
        x = x + self.proj(y)
        return x + self.mlp(self.ln2(x))


class Gpt(nn.Module):
    def __init__(self, vocab, fused_attention):
        super().__init__()
        self.embed, self.pos = nn.Embedding(vocab, WIDTH), nn.Embedding(SEQ, WIDTH)
        self.blocks = nn.Sequential(*[Block(fused_attention) for _ in range(LAYERS)])
        self.head = nn.Linear(WIDTH, vocab)

    def forward(self, tokens, targets):
        x = self.embed(tokens) + self.pos(torch.arange(tokens.shape[1], device=tokens.device))
        logits = self.head(self.blocks(x))
        return F.cross_entropy(logits.flatten(0, 1), targets.flatten())


class Tokens(torch.utils.data.Dataset):
    """Random token batches that cost 10 ms of CPU time each, as decoding and tokenising would."""

    def __init__(self, vocab, batches):
        self.vocab, self.batches = vocab, batches

    def __len__(self):
        return self.batches

    def __getitem__(self, i):
        time.sleep(0.010)
        g = torch.Generator().manual_seed(i)
        tokens = torch.randint(0, self.vocab, (BATCH, SEQ + 1), generator=g)
        # contiguous: a view of a pinned tensor is copied to pageable memory before a non-blocking copy
        return tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()


def gpt_loop(tuned, steps):
    if tuned:
        return tuned_gpt_loop(steps)
    model = Gpt(10007, fused_attention=False).cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, foreach=False)
    loader = torch.utils.data.DataLoader(Tokens(10007, steps), batch_size=None)
    losses, times = [], []

    def forward_pass(tokens, targets):
        loss = model(tokens.cuda(), targets.cuda())
        losses.append(loss.item())
        return loss

    for tokens, targets in loader:
        times.append(timed_step(lambda: forward_pass(tokens, targets), optimizer))
    return times, losses[-1]


def tuned_gpt_loop(steps):
    """The whole training step — forward, backward and the optimizer — captured once as a CUDA graph and
    replayed: one launch per step, and no Python between its kernels."""
    model = Gpt(10048, fused_attention=True).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True, capturable=True)
    loader = torch.utils.data.DataLoader(Tokens(10048, steps + 3), batch_size=None, num_workers=8,
                                         pin_memory=True, persistent_workers=True, prefetch_factor=4)
    batches = iter(loader)
    forward = torch.compile(model)  # Inductor's fused Triton kernels, captured below with the rest
    static_tokens, static_targets = (t.cuda() for t in next(batches))

    def train_step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = forward(static_tokens, static_targets)
        loss.backward()
        optimizer.step()
        return loss

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm up (compile, autotune, allocate) off the capturing stream
        for _ in range(3):
            optimizer.zero_grad(set_to_none=True)
            train_step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    optimizer.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_loss = train_step()
    losses, times = [], []
    for tokens, targets in batches:
        torch.cuda.synchronize()
        start = time.perf_counter()
        with nvtx.range("step"):
            static_tokens.copy_(tokens, non_blocking=True)
            static_targets.copy_(targets, non_blocking=True)
            graph.replay()
            losses.append(static_loss.detach().clone())
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
        if len(times) == steps:
            break
    return times, float(losses[-1])


def timed_step(forward_pass, optimizer):
    """One training step in NVTX ranges step > forward, backward, optimizer; returns its wall time in s."""
    torch.cuda.synchronize()
    start = time.perf_counter()
    with nvtx.range("step"):
        with nvtx.range("forward"):
            loss = forward_pass()
        with nvtx.range("backward"):
            loss.backward()
        with nvtx.range("optimizer"):
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    return time.perf_counter() - start


def mlp_loop(activations, steps):
    width, layers = 4096, 8
    tokens = 16384 if activations else 256
    model = nn.Sequential(*[nn.Sequential(nn.Linear(width, width), nn.GELU()) for _ in range(layers)]).cuda()
    optimizer = (torch.optim.SGD(model.parameters(), lr=1e-3) if activations else
                 torch.optim.Adam(model.parameters(), lr=1e-4))
    x = torch.randn(tokens, width, device="cuda")
    times = [timed_step(lambda: model(x).square().mean(), optimizer) for _ in range(steps)]
    return times, model(x).square().mean().item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("case", choices=CASES)
    parser.add_argument("--steps", type=int, default=12)
    args = parser.parse_args()
    torch.manual_seed(0)
    if args.case in ("naive", "tuned"):
        times, loss = gpt_loop(args.case == "tuned", args.steps)
    else:
        times, loss = mlp_loop(args.case == "memory_activations", args.steps)
    steady = times[3:] or times  # compile and CUDA-graph capture take the first steps
    print(json.dumps({"case": args.case, "steps": len(times), "median_step_ms": statistics.median(steady) * 1e3,
                      "peak_allocated_mib": torch.cuda.max_memory_allocated() / 2**20, "loss": loss}))


if __name__ == "__main__":
    main()
