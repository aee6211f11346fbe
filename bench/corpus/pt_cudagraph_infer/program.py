"""MLP inference (8 Linear+ReLU layers, width 2048, bf16, batch 32) captured once in a CUDA graph and replayed."""

import time

import torch
import torch.nn as nn

torch.manual_seed(0)
device = torch.device("cuda")

width, depth, batch_size, num_classes = 2048, 8, 32, 1000

layers = []
for _ in range(depth):
    layers += [nn.Linear(width, width), nn.ReLU()]
layers.append(nn.Linear(width, num_classes))
model = nn.Sequential(*layers).to(device=device, dtype=torch.bfloat16).eval()

num_batches = 16
batches = [torch.randn(batch_size, width, device=device, dtype=torch.bfloat16) for _ in range(num_batches)]

# Static input/output buffers for the graph, warmed up on a side stream before capture.
static_input = torch.zeros(batch_size, width, device=device, dtype=torch.bfloat16)
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side), torch.no_grad():
    for _ in range(3):
        model(static_input)
torch.cuda.current_stream().wait_stream(side)

graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph), torch.no_grad():
    static_output = model(static_input)


def predict(batch):
    static_input.copy_(batch)
    graph.replay()
    return static_output.argmax(dim=1)


warmup_steps, timed_steps = 20, 500

for i in range(warmup_steps):
    predict(batches[i % num_batches])
torch.cuda.synchronize()

predictions = []
start = time.perf_counter()
for i in range(timed_steps):
    predictions.append(predict(batches[i % num_batches]))
torch.cuda.synchronize()
elapsed = time.perf_counter() - start

print("first predictions:", predictions[0][:8].tolist())
print(f"{elapsed * 1000 / timed_steps:.3f} ms/step")
