"""Score a stream of small feature batches. The scorer centres its inputs with a bias-corrected moving
average of the feature means seen so far, kept in buffers updated in place on every call. The buffer
update runs eagerly before each call; the rest of the forward, which only reads the buffers, is
captured once in a CUDA graph and replayed."""

import time

import torch
import torch.nn as nn


class StreamingScorer(nn.Module):
    def __init__(self, features=256, hidden=512, depth=4, momentum=0.99):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("ema_mean", torch.zeros(features))
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))
        layers, width = [], features
        for _ in range(depth):
            layers += [nn.Linear(width, hidden), nn.GELU()]
            width = hidden
        self.mlp = nn.Sequential(*layers)
        self.out = nn.Linear(hidden, 1)

    def update_stats(self, x):
        self.steps += 1
        self.ema_mean.mul_(self.momentum).add_(x.mean(dim=0), alpha=1 - self.momentum)

    def forward(self, x):
        mean = self.ema_mean / (1 - self.momentum**self.steps)
        return self.out(self.mlp(x - mean)).squeeze(-1)


torch.manual_seed(0)
torch.set_float32_matmul_precision("high")
device = torch.device("cuda")

model = StreamingScorer().to(device).eval()

batch_size, num_batches = 32, 64
stream = [torch.randn(batch_size, 256, device=device) + 0.01 * i for i in range(num_batches)]

# The graph reads the buffers in place; warming it up and capturing it does not touch them.
static_x = torch.zeros(batch_size, 256, device=device)
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side), torch.no_grad():
    for _ in range(3):
        model(static_x)
torch.cuda.current_stream().wait_stream(side)
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph), torch.no_grad():
    static_scores = model(static_x)


def score(x):
    static_x.copy_(x)
    model.update_stats(static_x)
    graph.replay()
    return static_scores.clone()


warmup_steps, timed_steps = 20, 300
scores = []
with torch.no_grad():
    for i in range(warmup_steps):
        scores.append(score(stream[i % num_batches]))
    torch.cuda.synchronize()

    start = time.perf_counter()
    for i in range(warmup_steps, warmup_steps + timed_steps):
        scores.append(score(stream[i % num_batches]))
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start

print(f"steps seen {model.steps.item()}  last scores {scores[-1][:4].tolist()}")
print(f"{elapsed * 1000 / timed_steps:.3f} ms/step")
