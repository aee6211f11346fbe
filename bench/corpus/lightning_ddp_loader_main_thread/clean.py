"""A PyTorch Lightning training script: torchvision ResNet-18 on 128 x 128 crops of 10-class images, Lightning's DDP
on 2 GPUs (Lightning starts the second process itself), bf16 mixed precision, SGD with momentum. The twin of program.py
whose DataLoader augments the images in 6 worker processes per GPU into pinned memory.
Run with: python clean.py"""

import time

import lightning as L
import numpy as np
import torch
import torch.nn.functional as F
import torchvision
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms

WARMUP_STEPS, TIMED_STEPS = 10, 40


class SyntheticImages(Dataset):
    """Images stored as uint8 arrays (as CIFAR's dataset keeps them), each turned into a PIL image on access."""

    def __init__(self, n, size=144, seed=0):
        rng = np.random.default_rng(seed)
        self.images = rng.integers(0, 256, (n, size, size, 3), dtype=np.uint8)
        self.labels = rng.integers(0, 10, n)
        self.transform = transforms.Compose([
            transforms.RandomResizedCrop(128),
            transforms.RandomHorizontalFlip(),
            transforms.ToTensor(),
            transforms.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225)),
        ])

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        return self.transform(Image.fromarray(self.images[i])), int(self.labels[i])


class LitResNet(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.model = torchvision.models.resnet18(num_classes=10)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self.model(x), y)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4, nesterov=True)


class StepTimer(L.Callback):
    """Times the training steps after the warm-up, synchronising once at each end."""

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        if trainer.global_step == WARMUP_STEPS and not hasattr(self, "start"):
            torch.cuda.synchronize()
            self.start = time.perf_counter()

    def on_train_end(self, trainer, pl_module):
        torch.cuda.synchronize()
        if trainer.global_rank == 0:
            print(f"{(time.perf_counter() - self.start) * 1000 / TIMED_STEPS:.3f} ms/step")


def main():
    L.seed_everything(0)
    loader = DataLoader(SyntheticImages(13000), batch_size=128, shuffle=True, num_workers=6, drop_last=True,
                        pin_memory=True, persistent_workers=True)
    trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp", precision="bf16-mixed",
                        max_steps=WARMUP_STEPS + TIMED_STEPS, logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False, callbacks=[StepTimer()])
    trainer.fit(LitResNet(), loader)


if __name__ == "__main__":
    main()
