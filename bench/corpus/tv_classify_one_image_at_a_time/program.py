"""Classify a folder's worth of photos with a torchvision ResNet-50, the way the image-classification tutorials
do it: a predict(image) function takes one decoded HxWx3 uint8 picture, moves it to the GPU, resizes its shorter
side to 256, crops the centre 224x224, normalises with the ImageNet mean and std, runs the model in eval mode
under torch.no_grad(), and returns the top-1 class and its softmax probability as Python numbers. The main loop
calls predict on every picture and keeps the results.

Random weights (no download on this machine); the 192 pictures are synthetic (coarse colour blocks of assorted
sizes between 256 and 400 pixels a side, as an image decoder would hand them over). A step of the clock is one
picture."""

import time

import numpy as np
import torch
import torchvision
import torchvision.transforms.v2.functional as TF

torch.manual_seed(0)
device = torch.device("cuda")
torch.backends.cudnn.benchmark = True

model = torchvision.models.resnet50(weights=None).to(device)
model.eval()

MEAN = torch.tensor([0.485, 0.456, 0.406], device=device).view(3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225], device=device).view(3, 1, 1)


def synthetic_photo(rng):
    """A decoded picture: uint8, HxWx3, a few hundred pixels a side."""
    height, width = rng.integers(256, 401, size=2)
    blocks = rng.integers(0, 256, size=(height // 16 + 1, width // 16 + 1, 3), dtype=np.uint8)
    image = np.repeat(np.repeat(blocks, 16, axis=0), 16, axis=1)[:height, :width]
    return np.ascontiguousarray(image)


rng = np.random.default_rng(0)
images = [synthetic_photo(rng) for _ in range(192)]


def preprocess(image):
    x = torch.from_numpy(image).to(device)      # HxWx3 uint8 on the GPU
    x = x.permute(2, 0, 1).float().div(255)     # 3xHxW in [0, 1]
    x = TF.resize(x, [256], antialias=True)     # shorter side to 256
    x = TF.center_crop(x, [224, 224])
    return (x - MEAN) / STD


def predict(image):
    with torch.no_grad():
        x = preprocess(image).unsqueeze(0)
        logits = model(x)
        probs = torch.softmax(logits, dim=1)
        prob, cls = probs.max(dim=1)
    return cls.item(), prob.item()


warmup = 5
for image in images[:warmup]:
    predict(image)
torch.cuda.synchronize()

results = []
start = time.perf_counter()
for image in images:
    results.append(predict(image))
torch.cuda.synchronize()
elapsed = time.perf_counter() - start

classes = [cls for cls, _ in results]
print(f"classified {len(results)} images: class checksum {sum(classes)}, {len(set(classes))} distinct classes, "
      f"mean top-1 probability {sum(prob for _, prob in results) / len(results):.4f}")
print(f"{elapsed * 1000 / len(images):.3f} ms/step")
