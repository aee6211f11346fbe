"""Semantic segmentation with torchvision's DeepLabV3 (MobileNetV3-Large backbone), trained from scratch on
synthetic 21-class scenes: joint image/mask augmentation with transforms.v2 in four DataLoader workers,
bf16 autocast, SGD with momentum and a poly learning-rate schedule."""

import time

import torch
from torch.utils.data import DataLoader, Dataset
from torchvision import tv_tensors
from torchvision.models.segmentation import deeplabv3_mobilenet_v3_large
from torchvision.transforms import v2

torch.manual_seed(0)
device = torch.device("cuda")


class Scenes(Dataset):
    """Images of rectangles, each painted in its class's colour; the mask holds the classes, 255 on edges."""

    def __init__(self, count, size=400):
        g = torch.Generator().manual_seed(1)
        self.images, self.masks = [], []
        for _ in range(count):
            mask = torch.zeros(size, size, dtype=torch.uint8)
            for _ in range(6):
                x0, y0 = torch.randint(0, size - 64, (2,), generator=g).tolist()
                w, h = torch.randint(32, 160, (2,), generator=g).tolist()
                mask[y0 : y0 + h, x0 : x0 + w] = torch.randint(1, 21, (1,), generator=g).item()
            colours = torch.randint(0, 256, (21, 3), generator=g, dtype=torch.uint8)
            image = colours[mask.long()].permute(2, 0, 1).contiguous()
            self.images.append(tv_tensors.Image(image))
            self.masks.append(tv_tensors.Mask(mask))
        self.transform = v2.Compose(
            [
                v2.RandomResizedCrop(320, scale=(0.5, 1.0), antialias=True),
                v2.RandomHorizontalFlip(),
                v2.ColorJitter(0.2, 0.2, 0.2),
                v2.ToDtype({tv_tensors.Image: torch.float32, tv_tensors.Mask: torch.int64, "others": None}, scale=True),
                v2.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
            ]
        )

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        image, mask = self.transform(self.images[i], self.masks[i])
        return image, mask


if __name__ == "__main__":
    model = deeplabv3_mobilenet_v3_large(num_classes=21, weights=None, weights_backbone=None).to(device)
    loader = DataLoader(Scenes(512), batch_size=16, shuffle=True, num_workers=4, pin_memory=True,
                        persistent_workers=True, drop_last=True)
    criterion = torch.nn.CrossEntropyLoss(ignore_index=255)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9, weight_decay=1e-4)
    total = 3 * len(loader)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: (1 - s / total) ** 0.9)

    def batches():
        while True:
            yield from loader

    stream = batches()
    model.train()

    def train_step():
        images, masks = next(stream)
        images, masks = images.to(device, non_blocking=True), masks.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = criterion(model(images)["out"], masks)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        scheduler.step()
        return loss.detach()

    for _ in range(8):
        train_step()
    torch.cuda.synchronize()
    steps = 40
    start = time.perf_counter()
    for _ in range(steps):
        loss = train_step()
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    print(f"loss {loss.item():.4f}")
    print(f"{elapsed * 1000 / steps:.3f} ms/step")
