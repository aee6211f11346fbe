"""A torchvision ResNet-50 training loop tuned the way the PyTorch performance guide says: batches already on
the GPU, bf16 autocast, channels_last, fused AdamW, gradients set to None."""

import time

import torch
import torchvision

torch.manual_seed(0)
device = torch.device("cuda")
torch.backends.cudnn.benchmark = True
model = torchvision.models.resnet50(num_classes=1000).to(device, memory_format=torch.channels_last)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
criterion = torch.nn.CrossEntropyLoss()
batches = [(torch.randn(64, 3, 224, 224, device=device).to(memory_format=torch.channels_last),
            torch.randint(0, 1000, (64,), device=device)) for _ in range(4)]


def step(images, labels):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = criterion(model(images), labels)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss


for i in range(5):
    step(*batches[i % 4])
torch.cuda.synchronize()
timed = 20
start = time.perf_counter()
for i in range(timed):
    loss = step(*batches[i % 4])
torch.cuda.synchronize()
elapsed = time.perf_counter() - start
print(f"loss {loss.item():.4f}")
print(f"{elapsed * 1000 / timed:.3f} ms/step")
