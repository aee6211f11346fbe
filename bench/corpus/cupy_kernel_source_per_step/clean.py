"""The same smoothing with one kernel, built once, the frame's factor passed as an argument."""

import time

import cupy as cp

streams, length = 1024, 4096
signal = cp.random.standard_normal((streams, length), dtype=cp.float32)
state = cp.zeros((streams, length), dtype=cp.float32)


kernel = cp.ElementwiseKernel("float32 x, float32 alpha", "float32 s", "s = alpha * x + (1.0f - alpha) * s", "smooth")


def smooth(state, frame, alpha):
    kernel(frame, cp.float32(alpha), state)


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
