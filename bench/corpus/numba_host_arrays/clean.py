"""Explicit heat diffusion on a 2048x2048 float32 plate with numba's CUDA target: a five-point FTCS stencil
written as a @cuda.jit kernel, the left edge held at 100 degrees by a heater and the other edges at 20. The
temperature grids are built as NumPy arrays, moved to the GPU once with cuda.to_device and copied back once
at the end; the two device grids swap roles after each step, and every 100 steps the total heat and the peak
temperature are reduced with cuda.reduce and printed."""

import math
import time

import numpy as np

if not hasattr(np, "row_stack"):  # removed in NumPy 2.5; the numba-cuda installed here still registers it
    np.row_stack = np.vstack
from numba import cuda  # noqa: E402

n = 2048
alpha, dx, dt = 1.0, 1.0, 0.2          # FTCS is stable for alpha * dt / dx**2 <= 0.25
r = np.float32(alpha * dt / dx**2)
keep = np.float32(1.0 - 4.0 * r)


@cuda.jit
def diffuse(u, u_new, keep, r):
    j, i = cuda.grid(2)  # x runs along a row: neighbouring threads read neighbouring floats
    if i > 0 and i < u.shape[0] - 1 and j > 0 and j < u.shape[1] - 1:
        u_new[i, j] = keep * u[i, j] + r * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])


total_heat = cuda.reduce(lambda a, b: a + b)
peak = cuda.reduce(lambda a, b: max(a, b))

threads = (32, 8)
blocks = (math.ceil(n / threads[0]), math.ceil(n / threads[1]))

rng = np.random.default_rng(0)
u = np.full((n, n), 20.0, dtype=np.float32)
u[:, 0] = 100.0                                   # the heater along the left edge
u[1:-1, 1:-1] += 5.0 * rng.random((n - 2, n - 2), dtype=np.float32)
u_new = u.copy()                                  # same boundary values: the kernel never writes them
d_u = cuda.to_device(u)
d_u_new = cuda.to_device(u_new)


def report(step, u):
    flat = u.ravel()
    print(f"step {step:4d}: heat {total_heat(flat):.6e}  peak {peak(flat):.3f}")


report(0, d_u)
for _ in range(5):                                # warm-up: the first launch compiles the kernel
    diffuse[blocks, threads](d_u, d_u_new, keep, r)
    d_u, d_u_new = d_u_new, d_u
cuda.synchronize()

steps = 400
start = time.perf_counter()
for step in range(1, steps + 1):
    diffuse[blocks, threads](d_u, d_u_new, keep, r)
    d_u, d_u_new = d_u_new, d_u
    if step % 100 == 0:
        report(step, d_u)
cuda.synchronize()
elapsed = time.perf_counter() - start

u = d_u.copy_to_host()
print(f"checksum {float(u.sum(dtype=np.float64)):.6e}  centre {float(u[n // 2, n // 2]):.4f}")
print(f"{elapsed * 1000 / steps:.3f} ms/step")
