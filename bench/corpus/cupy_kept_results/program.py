"""Gradient-orientation descriptors (4x4 cells of 8 orientation bins, 128 values each) of every 16x16 block of a
1024x1024 grey video frame, with CuPy; the script keeps every frame's 4096 descriptors on the GPU and fits a PCA
basis for them once the video is done."""

import math
import time

import cupy as cp


def descriptors(frame):
    gy, gx = cp.gradient(frame)
    magnitude = cp.hypot(gx, gy)
    bins = ((cp.arctan2(gy, gx) + math.pi) * (8 / (2 * math.pi))).astype(cp.int32) % 8
    votes = (bins[..., None] == cp.arange(8)) * magnitude[..., None]
    cells = votes.reshape(256, 4, 256, 4, 8).sum(axis=(1, 3))
    desc = cells.reshape(64, 4, 64, 4, 8).transpose(0, 2, 1, 3, 4).reshape(4096, 128)
    return desc / (cp.linalg.norm(desc, axis=1, keepdims=True) + 1e-6)


cp.random.seed(0)
video = [cp.random.random((1024, 1024), dtype=cp.float32) for _ in range(8)]
for i in range(3):
    descriptors(video[i])
cp.cuda.Device().synchronize()

frames = 300
start = time.perf_counter()
kept = []
for i in range(frames):
    frame = cp.roll(video[i % 8], i, axis=1)
    kept.append(descriptors(frame))
cp.cuda.Device().synchronize()
elapsed = time.perf_counter() - start

everything = cp.concatenate(kept)
mean = everything.mean(axis=0)
centred = everything - mean
covariance = centred.T @ centred / len(everything)
variances = cp.linalg.eigvalsh(covariance)[::-1]
print(f"{len(everything)} descriptors, first component {float(variances[0] / variances.sum()):.4f} of the variance")
print(f"{elapsed * 1000 / frames:.3f} ms/step")
