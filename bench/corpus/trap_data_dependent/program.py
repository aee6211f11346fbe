"""Early-exit classifier evaluated on a stream of batches: after each block an exit head scores the batch,
and the forward returns as soon as the whole batch is confident enough."""

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
        for depth, (block, exit_head) in enumerate(zip(self.blocks, self.exits)):
            h = block(h)
            logits = exit_head(h)
            confidence = logits.softmax(dim=-1).amax(dim=-1)
            if confidence.min() > self.threshold:  # every sample is sure: skip the remaining blocks
                return logits, depth
        return logits, depth


torch.manual_seed(0)
device = torch.device("cuda")
torch.backends.cuda.matmul.allow_tf32 = True

model = EarlyExitNet().to(device).eval()

batch_size, num_batches = 64, 8
batches = [torch.randn(batch_size, 256, device=device) for _ in range(num_batches)]

exit_counts = [0] * len(model.blocks)


def predict(x):
    with torch.no_grad():
        logits, depth = model(x)
    exit_counts[depth] += 1
    return logits.argmax(dim=-1)


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

print("first predictions:", predictions[0][:8].tolist(), "exits per depth:", exit_counts)
print(f"{elapsed * 1000 / timed_steps:.3f} ms/step")
