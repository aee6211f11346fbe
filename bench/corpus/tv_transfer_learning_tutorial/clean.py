"""PyTorch's transfer-learning tutorial (program.py) with its DataLoaders' workers kept between epochs
(persistent_workers=True): a ResNet-18 fine-tuned on a small ImageFolder of two classes, batch 4, a DataLoader of
4 workers per phase, a train and a val phase every epoch, SGD with momentum and a StepLR schedule.

The images are made here (JPEGs of about the tutorial's size, written to a temporary folder) so that nothing is
downloaded; everything else is the tutorial's loop."""

import copy
import os
import tempfile
import time

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from PIL import Image
from torch.optim import lr_scheduler
from torchvision import datasets, models, transforms

PERSISTENT = True  # the fix: the workers stay between epochs


def make_image_folder(root):
    """hymenoptera_data's layout: {train,val}/{ants,bees}/*.jpg, 244 and 153 images of about 500x375."""
    rng = np.random.default_rng(0)
    counts = {"train": {"ants": 123, "bees": 121}, "val": {"ants": 70, "bees": 83}}
    for phase, classes in counts.items():
        for name, n in classes.items():
            folder = os.path.join(root, phase, name)
            os.makedirs(folder)
            for i in range(n):
                h, w = rng.integers(330, 420), rng.integers(440, 560)
                base = np.linspace(0, 255, w, dtype=np.float32)[None, :, None] * rng.random(3, dtype=np.float32)
                noise = rng.normal(0, 20, (h, w, 3)).astype(np.float32)
                pixels = np.clip(base + noise + (60 if name == "bees" else 0), 0, 255).astype(np.uint8)
                Image.fromarray(pixels).save(os.path.join(folder, f"{i}.jpg"), quality=90)


data_transforms = {
    "train": transforms.Compose([
        transforms.RandomResizedCrop(224),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
    ]),
    "val": transforms.Compose([
        transforms.Resize(256),
        transforms.CenterCrop(224),
        transforms.ToTensor(),
        transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
    ]),
}


def train_model(model, criterion, optimizer, scheduler, dataloaders, dataset_sizes, device, num_epochs):
    best_model_wts = copy.deepcopy(model.state_dict())
    best_acc = 0.0
    train_time, train_steps = 0.0, 0
    for epoch in range(num_epochs):
        print(f"Epoch {epoch}/{num_epochs - 1}")
        for phase in ["train", "val"]:
            if phase == "train":
                model.train()
            else:
                model.eval()
            running_loss = 0.0
            running_corrects = 0
            start = time.perf_counter()
            steps = 0
            for inputs, labels in dataloaders[phase]:
                inputs = inputs.to(device)
                labels = labels.to(device)
                optimizer.zero_grad()
                with torch.set_grad_enabled(phase == "train"):
                    outputs = model(inputs)
                    _, preds = torch.max(outputs, 1)
                    loss = criterion(outputs, labels)
                    if phase == "train":
                        loss.backward()
                        optimizer.step()
                running_loss += loss.item() * inputs.size(0)
                running_corrects += torch.sum(preds == labels.data)
                steps += 1
            if phase == "train":
                scheduler.step()
                torch.cuda.synchronize()
                if epoch > 0:  # the first epoch warms up
                    train_time += time.perf_counter() - start
                    train_steps += steps
            epoch_loss = running_loss / dataset_sizes[phase]
            epoch_acc = running_corrects.double() / dataset_sizes[phase]
            print(f"{phase} Loss: {epoch_loss:.4f} Acc: {epoch_acc:.4f}")
            if phase == "val" and epoch_acc > best_acc:
                best_acc = epoch_acc
                best_model_wts = copy.deepcopy(model.state_dict())
    print(f"Best val Acc: {best_acc:4f}")
    model.load_state_dict(best_model_wts)
    print(f"{train_time * 1000 / train_steps:.3f} ms/step")
    return model


def main():
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as data_dir:
        make_image_folder(data_dir)
        image_datasets = {x: datasets.ImageFolder(os.path.join(data_dir, x), data_transforms[x])
                          for x in ["train", "val"]}
        dataloaders = {x: torch.utils.data.DataLoader(image_datasets[x], batch_size=4, shuffle=True, num_workers=4,
                                                      persistent_workers=PERSISTENT)
                       for x in ["train", "val"]}
        dataset_sizes = {x: len(image_datasets[x]) for x in ["train", "val"]}
        device = torch.device("cuda:0")

        model_ft = models.resnet18()  # the tutorial loads ImageNet weights; nothing is downloaded here
        model_ft.fc = nn.Linear(model_ft.fc.in_features, 2)
        model_ft = model_ft.to(device)
        criterion = nn.CrossEntropyLoss()
        optimizer_ft = optim.SGD(model_ft.parameters(), lr=0.001, momentum=0.9)
        exp_lr_scheduler = lr_scheduler.StepLR(optimizer_ft, step_size=7, gamma=0.1)
        train_model(model_ft, criterion, optimizer_ft, exp_lr_scheduler, dataloaders, dataset_sizes, device,
                    num_epochs=3)


if __name__ == "__main__":
    main()
