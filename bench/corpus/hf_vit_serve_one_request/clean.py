"""A quick image-classification service: a transformers ViT classifier answering requests in batches of 32.

Each request is one decoded picture (an HxWx3 uint8 array, a few hundred pixels a side). handle_batch
preprocesses each of 32 pictures on the CPU the way ViTImageProcessor does (bilinear resize to 224x224 with PIL,
rescale to [0, 1], normalise with mean and std 0.5), stacks them into one 32x3x224x224 tensor, moves it to the
GPU, runs the model once in eval mode under torch.inference_mode() and reads the 32 top-1 labels and their
softmax scores back as Python numbers, which go into the list of answers.

The model is a ViT-Small/16 (DeiT-S sized: 12 layers, hidden 384, 6 heads, 1000 labels) built from a ViTConfig
with random weights, fp32 (no download on this machine); the 64 pictures are synthetic. A step of the clock is
one request (the batch's time divided by its 32 requests)."""

import time

import numpy as np
import torch
from PIL import Image
from transformers import ViTConfig, ViTForImageClassification

torch.manual_seed(0)
device = torch.device("cuda")

config = ViTConfig(
    image_size=224,
    patch_size=16,
    hidden_size=384,
    num_hidden_layers=12,
    num_attention_heads=6,
    intermediate_size=1536,
    num_labels=1000,
)
model = ViTForImageClassification(config).to(device)
model.eval()

IMAGE_SIZE = 224
MEAN = np.array([0.5, 0.5, 0.5], dtype=np.float32)
STD = np.array([0.5, 0.5, 0.5], dtype=np.float32)


def synthetic_upload(rng):
    """A decoded picture as a client would send it: uint8, HxWx3, 240-480 pixels a side."""
    height, width = rng.integers(240, 481, size=2)
    return rng.integers(0, 256, size=(height, width, 3), dtype=np.uint8)


def preprocess(image):
    """HxWx3 uint8 -> 1x3x224x224 float32, as ViTImageProcessor: resize, rescale, normalise."""
    resized = Image.fromarray(image).resize((IMAGE_SIZE, IMAGE_SIZE), resample=Image.BILINEAR)
    x = np.asarray(resized, dtype=np.float32) / 255.0
    x = (x - MEAN) / STD
    return torch.from_numpy(x.transpose(2, 0, 1).copy()).unsqueeze(0)


def handle_batch(images):
    pixel_values = torch.cat([preprocess(image) for image in images]).to(device)
    with torch.inference_mode():
        logits = model(pixel_values=pixel_values).logits
        scores, labels = logits.softmax(dim=-1).max(dim=-1)
    return list(zip(labels.tolist(), scores.tolist()))


rng = np.random.default_rng(0)
requests = [synthetic_upload(rng) for _ in range(64)]

batch_size = 32
warmup = 1
for b in range(warmup):
    handle_batch(requests[b * batch_size:(b + 1) * batch_size])
torch.cuda.synchronize()

timed = 160
answers = []
start = time.perf_counter()
for first in range(0, timed, batch_size):
    batch = [requests[i % len(requests)] for i in range(first, first + batch_size)]
    answers.extend(handle_batch(batch))
torch.cuda.synchronize()
elapsed = time.perf_counter() - start

labels = [label for label, _ in answers]
scores = [score for _, score in answers]
print(f"answered {len(answers)} requests: label checksum {sum(labels)}, {len(set(labels))} distinct labels, "
      f"mean score {sum(scores) / len(scores):.6f}")
print(f"{elapsed * 1000 / timed:.3f} ms/step")
