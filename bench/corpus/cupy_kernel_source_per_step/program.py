"""Exponential smoothing of 1024 sensor streams in CuPy, the smoothing factor decayed every frame; the kernel's
source is written with the frame's factor in it (an f-string), as one writes a constant into CUDA code."""

import time

import cupy as cp

streams, length = 1024, 4096
signal = cp.random.standard_normal((streams, length), dtype=cp.float32)
state = cp.zeros((streams, length), dtype=cp.float32)


def smooth(state, frame, alpha):
    kernel = cp.ElementwiseKernel(
        "float32 x", "float32 s", f"s = {alpha:.9f}f * x + (1.0f - {alpha:.9f}f) * s", "smooth"
    )
    kernel(frame, state)


for i in range(5):
    smooth(state, signal, 0.5 / (1 + i))
cp.cuda.Device().synchronize()
frames = 50
start = time.perf_counter()
for i in range(5, 5 + frames):
    smooth(state, cp.roll(signal, i, axis=1), 0.5 / (1 + i))
cp.cuda.Device().synchronize()
elapsed = time.perf_counter() - start
print(f"mean {float(state.mean()):.6f}")
print(f"{elapsed * 1000 / frames:.3f} ms/step")
