"""Fine-tuning a torchvision ResNet-18 on an image folder-like dataset: each sample is decoded as a uint8
HWC array, randomly cropped, flipped and normalised with NumPy in __getitem__, batched by a DataLoader with worker processes and pinned memory."""

import time

import numpy as np
import torch
import torchvision
from torch.utils.data import DataLoader, Dataset


class Images(Dataset):
    def __init__(self, n=4096, size=144, crop=128, classes=10):
        rng = np.random.default_rng(0)
        self.images = rng.integers(0, 256, (n, size, size, 3), dtype=np.uint8)
        self.labels = rng.integers(0, classes, n)
        self.crop = crop
        self.mean = np.array([0.485, 0.456, 0.406], dtype=np.float32) * 255
        self.std = np.array([0.229, 0.224, 0.225], dtype=np.float32) * 255

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        img = self.images[i]
        y, x = np.random.randint(0, img.shape[0] - self.crop, 2)
        img = img[y:y + self.crop, x:x + self.crop]
        if np.random.rand() < 0.5:
            img = img[:, ::-1]
        img = (img.astype(np.float32) - self.mean) / self.std
        return torch.from_numpy(img.transpose(2, 0, 1).copy()), int(self.labels[i])


device = torch.device("cuda")
torch.manual_seed(0)
model = torchvision.models.resnet18(num_classes=10).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
criterion = torch.nn.CrossEntropyLoss()
loader = DataLoader(Images(), batch_size=64, shuffle=True, num_workers=6, pin_memory=True, persistent_workers=True)

warmup, timed = 3, 25
model.train()
for step, (images, labels) in enumerate(loader):
    if step == warmup:
        torch.cuda.synchronize()
        start = time.perf_counter()
    if step == warmup + timed:
        break
    images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
    loss = criterion(model(images), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
torch.cuda.synchronize()
elapsed = time.perf_counter() - start
print(f"loss {loss.item():.4f}")
print(f"{elapsed * 1000 / timed:.3f} ms/step")
