"""A two-layer network trained with a training step written as a plain function over raw weight tensors, no
nn.Module and no torch.optim, captured once in a CUDA graph and replayed (torch.cuda.graph, as its docs show
for a whole training step: static inputs, warm-up on a side stream, gradients kept allocated)."""

import time

import torch

torch.manual_seed(0)
device = torch.device("cuda")
d_in, d_hidden, d_out, batch = 128, 256, 10, 64
w1 = (torch.randn(d_in, d_hidden, device=device) / d_in ** 0.5).requires_grad_()
b1 = torch.zeros(d_hidden, device=device, requires_grad=True)
w2 = (torch.randn(d_hidden, d_out, device=device) / d_hidden ** 0.5).requires_grad_()
b2 = torch.zeros(d_out, device=device, requires_grad=True)
params = [w1, b1, w2, b2]
velocity = [torch.zeros_like(p) for p in params]
x = torch.randn(batch, d_in, device=device)
y = torch.randint(0, d_out, (batch,), device=device)


def train_step(lr=0.05, momentum=0.9):
    h = torch.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    loss = torch.nn.functional.cross_entropy(logits, y) + 1e-4 * sum((p * p).sum() for p in params)
    loss.backward()
    with torch.no_grad():
        for p, v in zip(params, velocity):
            v.mul_(momentum).add_(p.grad)
            p.sub_(lr * v)
            p.grad.zero_()  # kept allocated: the graph reuses the same buffers
    return loss.detach()


side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for _ in range(3):
        train_step()
torch.cuda.current_stream().wait_stream(side)
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    static_loss = train_step()

for _ in range(20):
    graph.replay()
torch.cuda.synchronize()
timed = 500
start = time.perf_counter()
for _ in range(timed):
    graph.replay()
torch.cuda.synchronize()
elapsed = time.perf_counter() - start
print(f"loss {static_loss.item():.4f}")
print(f"{elapsed * 1000 / timed:.3f} ms/step")
