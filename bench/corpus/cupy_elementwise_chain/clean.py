"""Tone-mapping a stream of 4096x4096 HDR frames: exposure, Reinhard operator, gamma, contrast, a blend with the
previous frame and a clip, fused into one kernel with cupy.fuse."""

import time

import cupy as cp


EXPOSURE, GAMMA, CONTRAST, BLEND = 1.5, 1 / 2.2, 1.1, 0.8


@cp.fuse()
def tonemap(frame, previous):
    x = frame * EXPOSURE
    x = x / (1.0 + x)
    x = cp.power(x, GAMMA)
    x = (x - 0.5) * CONTRAST + 0.5
    x = BLEND * x + (1.0 - BLEND) * previous
    return cp.minimum(cp.maximum(x, 0.0), 1.0)


cp.random.seed(0)
frames = [cp.random.random((4096, 4096), dtype=cp.float32) * 4 for _ in range(4)]
out = cp.zeros((4096, 4096), dtype=cp.float32)
for i in range(5):
    out = tonemap(frames[i % 4], out)
cp.cuda.Device().synchronize()
timed = 40
start = time.perf_counter()
for i in range(timed):
    out = tonemap(frames[i % 4], out)
cp.cuda.Device().synchronize()
elapsed = time.perf_counter() - start
print(f"mean {float(out.mean()):.5f}")
print(f"{elapsed * 1000 / timed:.3f} ms/step")
