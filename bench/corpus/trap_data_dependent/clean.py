"""Early-exit classifier evaluated on a stream of batches: after each block an exit head scores the batch,
and the output is the first exit at which the whole batch is confident enough, chosen on the GPU with
torch.where (every block runs; nothing is read back to the host), so the forward is captured once in a
CUDA graph and replayed per batch."""

import time

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return x + self.fc2(self.act(self.fc1(self.norm(x))))


class EarlyExitNet(nn.Module):
    def __init__(self, in_dim=256, dim=512, hidden=1024, num_blocks=6, num_classes=10, threshold=0.9):
        super().__init__()
        self.stem = nn.Linear(in_dim, dim)
        self.blocks = nn.ModuleList([Block(dim, hidden) for _ in range(num_blocks)])
        self.exits = nn.ModuleList([nn.Linear(dim, num_classes) for _ in range(num_blocks)])
        self.threshold = threshold

    def forward(self, x):
        h = self.stem(x)
        exited = torch.zeros((), dtype=torch.bool, device=x.device)
        depth = torch.zeros((), dtype=torch.long, device=x.device)
        chosen = None
        for i, (block, exit_head) in enumerate(zip(self.blocks, self.exits)):
            h = block(h)
            logits = exit_head(h)
            confidence = logits.softmax(dim=-1).amax(dim=-1)
            # Keep the logits of the first exit at which every sample was sure.
            chosen = logits if chosen is None else torch.where(exited, chosen, logits)
            depth = torch.where(exited, depth, i)
            exited = exited | (confidence.min() > self.threshold)
        return chosen, depth


torch.manual_seed(0)
device = torch.device("cuda")
torch.backends.cuda.matmul.allow_tf32 = True

model = EarlyExitNet().to(device).eval()

batch_size, num_batches = 64, 8
batches = [torch.randn(batch_size, 256, device=device) for _ in range(num_batches)]

exit_counts = torch.zeros(len(model.blocks), device=device)
one = torch.ones(1, device=device)

# With no host read left in the forward, it can be captured once and replayed.
static_input = torch.zeros(batch_size, 256, device=device)
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side), torch.no_grad():
    for _ in range(3):
        model(static_input)
torch.cuda.current_stream().wait_stream(side)
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph), torch.no_grad():
    static_logits, static_depth = model(static_input)


def predict(x):
    static_input.copy_(x)
    graph.replay()
    exit_counts.index_add_(0, static_depth.view(1), one)
    return static_logits.argmax(dim=-1)


warmup_steps, timed_steps = 10, 100

for i in range(warmup_steps):
    predict(batches[i % num_batches])
torch.cuda.synchronize()

predictions = []
start = time.perf_counter()
for i in range(timed_steps):
    predictions.append(predict(batches[i % num_batches]))
torch.cuda.synchronize()
elapsed = time.perf_counter() - start

print("first predictions:", predictions[0][:8].tolist(), "exits per depth:", exit_counts.long().tolist())
print(f"{elapsed * 1000 / timed_steps:.3f} ms/step")
