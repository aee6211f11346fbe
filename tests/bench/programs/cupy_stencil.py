"""A CuPy script as a NumPy user would port one: a 2-D heat-diffusion stencil written with array slicing, a
convergence check every step (float(): a copy back to the host), 200 steps. For checking the advisor on a
program it was not written against."""
import cupy as cp

u = cp.zeros((4096, 4096), dtype=cp.float32)
u[2048 - 64:2048 + 64, 2048 - 64:2048 + 64] = 100.0
for step in range(200):
    new = u.copy()
    new[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.1 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1])
    change = float(cp.abs(new - u).max())
    u = new
print(step, change)
