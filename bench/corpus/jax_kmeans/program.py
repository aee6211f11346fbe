"""k-means clustering of 1M 64-dimensional points with JAX: a jitted Lloyd iteration (distances through a
matmul, argmin, new centroids by segment sums), 40 iterations from a Python loop, the inertia read once at the
end."""

import time

import jax
import jax.numpy as jnp


@jax.jit
def lloyd_step(points, centroids):
    # |p - c|^2 = |p|^2 - 2 p.c + |c|^2, the cross term as one matmul
    d2 = (jnp.sum(points**2, axis=1, keepdims=True) - 2 * points @ centroids.T + jnp.sum(centroids**2, axis=1))
    labels = jnp.argmin(d2, axis=1)
    k = centroids.shape[0]
    sums = jax.ops.segment_sum(points, labels, num_segments=k)
    counts = jax.ops.segment_sum(jnp.ones(points.shape[0], points.dtype), labels, num_segments=k)
    new = jnp.where(counts[:, None] > 0, sums / jnp.maximum(counts, 1)[:, None], centroids)
    inertia = jnp.sum(jnp.min(d2, axis=1))
    return new, inertia


key = jax.random.PRNGKey(0)
centers = jax.random.normal(key, (32, 64)) * 4
labels = jax.random.randint(jax.random.PRNGKey(1), (1_000_000,), 0, 32)
points = centers[labels] + jax.random.normal(jax.random.PRNGKey(2), (1_000_000, 64))
centroids = points[:32]
for _ in range(3):
    centroids, inertia = lloyd_step(points, centroids)
inertia.block_until_ready()
timed = 40
start = time.perf_counter()
for _ in range(timed):
    centroids, inertia = lloyd_step(points, centroids)
inertia.block_until_ready()
elapsed = time.perf_counter() - start
print(f"inertia {float(inertia):.1f}")
print(f"{elapsed * 1000 / timed:.3f} ms/step")
