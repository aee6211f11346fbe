"""Object detection with torchvision's Faster R-CNN (MobileNetV3-Large FPN backbone, 91 COCO classes) in eval
mode: batches of four 480x640 frames, each frame's detections above a 0.5 score counted for a report. Random
weights (no download on this machine); the frames are synthetic and already on the GPU."""

import time

import torch
import torchvision


def main():
    torch.manual_seed(0)
    device = torch.device("cuda")
    model = torchvision.models.detection.fasterrcnn_mobilenet_v3_large_fpn(
        weights=None, weights_backbone=None, num_classes=91).to(device).eval()
    frames = [torch.rand(3, 480, 640, device=device) for _ in range(16)]
    batches = [frames[i:i + 4] for i in range(0, len(frames), 4)]

    detected = []
    with torch.inference_mode():
        for batch in batches[:2]:
            model(batch)
        torch.cuda.synchronize()
        timed = 24
        start = time.perf_counter()
        for i in range(timed):
            outputs = model(batches[i % len(batches)])
            detected.append(sum(int((o["scores"] > 0.5).sum()) for o in outputs))
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - start

    print(f"detections per batch: min {min(detected)}, max {max(detected)}")
    print(f"{elapsed * 1000 / timed:.3f} ms/step")


if __name__ == "__main__":
    main()
