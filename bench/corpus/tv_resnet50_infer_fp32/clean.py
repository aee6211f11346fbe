"""ResNet-50 batch inference (torchvision), 64 images of 224x224 per batch: inference mode,
bf16 autocast and channels_last."""

import time

import torch
import torchvision

torch.manual_seed(0)
device = torch.device("cuda")
torch.backends.cudnn.benchmark = True

model = torchvision.models.resnet50(weights=None).to(device, memory_format=torch.channels_last)
model.eval()

batch_size = 64
num_batches = 4
images = [
    torch.randn(batch_size, 3, 224, 224, device=device).contiguous(memory_format=torch.channels_last)
    for _ in range(num_batches)
]


def predict(batch):
    with torch.inference_mode(), torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        logits = model(batch)
    return logits.argmax(dim=1)


warmup_batches, timed_batches = 5, 20

for i in range(warmup_batches):
    predict(images[i % num_batches])
torch.cuda.synchronize()

predictions = []
start = time.perf_counter()
for i in range(timed_batches):
    predictions.append(predict(images[i % num_batches]))
torch.cuda.synchronize()
elapsed = time.perf_counter() - start

print("first predictions:", predictions[0][:8].tolist())
print(f"{elapsed * 1000 / timed_batches:.3f} ms/step")
