"""Training torchvision's MobileNetV3-Large from scratch with bf16 autocast, SGD with Nesterov momentum and
label smoothing, on 224x224 images; the batches are made on the GPU ahead of time (a stand-in for a loader
that keeps up), the loss averaged on the GPU and printed once at the end."""

import time

import torch
import torch.nn as nn
import torchvision


def main():
    device = torch.device("cuda")
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    model = torchvision.models.mobilenet_v3_large(num_classes=1000).to(device)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=4e-5)

    batch_size = 96
    batches = [
        (torch.randn(batch_size, 3, 224, 224, device=device), torch.randint(0, 1000, (batch_size,), device=device))
        for _ in range(4)
    ]

    def train_step(images, targets):
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss = criterion(model(images), targets)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss.detach()

    model.train()
    for i in range(5):
        train_step(*batches[i % 4])
    torch.cuda.synchronize()
    timed = 30
    total = torch.zeros((), device=device)
    start = time.perf_counter()
    for i in range(timed):
        total += train_step(*batches[i % 4])
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    print(f"mean loss {total.item() / timed:.4f}")
    print(f"{elapsed * 1000 / timed:.3f} ms/step")


if __name__ == "__main__":
    main()
