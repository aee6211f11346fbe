"""Bird's-eye-view occupancy maps from a recorded LiDAR drive replayed on the GPU with CuPy: the scans grow as
the car enters the city and shrink as it leaves, and each scan is binned into a 512x512 grid in one go."""

import math
import time

import cupy as cp
import cupyx

GRID, CELL = 512, 0.2  # 102.4 m x 102.4 m around the car
HALF = GRID * CELL / 2


def occupancy(points, origin, bev):
    x = points[:, 0] - origin[0]
    y = points[:, 1] - origin[1]
    z = points[:, 2]
    r = cp.sqrt(x * x + y * y)
    col = cp.floor((x + HALF) / CELL).astype(cp.int32)
    row = cp.floor((y + HALF) / CELL).astype(cp.int32)
    keep = (r > 2.0) & (r < 50.0) & (z > -1.5) & (z < 2.5)
    keep &= (col >= 0) & (col < GRID) & (row >= 0) & (row < GRID)
    cell = cp.where(keep, row * GRID + col, 0)
    cupyx.scatter_add(bev, cell, keep.astype(cp.int32))


cp.random.seed(0)
drive = cp.random.standard_normal((32_000_000, 3), dtype=cp.float32)  # x, y in metres around the car, z height
drive[:, :2] *= 15.0
frames = 43
sizes = [int(8_000_000 + 16_000_000 * math.sin(math.pi * k / (frames - 1))) for k in range(frames)]
starts = [(k * 7_919_113) % (len(drive) - n) for k, n in enumerate(sizes)]
bev = cp.zeros(GRID * GRID, dtype=cp.int32)
pool = cp.get_default_memory_pool()


def step(k):
    scan = drive[starts[k] : starts[k] + sizes[k]]
    occupancy(scan, (0.5 * math.cos(k / 7), 0.5 * math.sin(k / 7)), bev)


warmup = 3
for k in range(warmup):
    step(k)
cp.cuda.Device().synchronize()
start = time.perf_counter()
for k in range(warmup, frames):
    step(k)
cp.cuda.Device().synchronize()
elapsed = time.perf_counter() - start
print(f"occupied cells {int((bev > 0).sum())}, points kept {int(bev.sum())}")
print(f"memory pool: {pool.used_bytes() / 2**20:.0f} MiB used, {pool.total_bytes() / 2**20:.0f} MiB held")
print(f"{elapsed * 1000 / (frames - warmup):.3f} ms/step")
