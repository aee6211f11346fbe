"""k-means clustering in CuPy (Lloyd's algorithm) of 2 million 32-dimensional points into 256 clusters: the
distances through one matrix product per iteration, the new centroids by scatter-adding each point into its
cluster, and the loop stopping once the centroids move less than a tolerance (checked every iteration)."""

import time

import cupy as cp
import cupyx


def kmeans(points, k, iterations, tol=1e-4, seed=0):
    cp.random.seed(seed)
    centroids = points[cp.random.permutation(points.shape[0])[:k]]
    point_norms = (points * points).sum(axis=1, keepdims=True)
    for it in range(iterations):
        # |x - c|^2 = |x|^2 - 2 x.c + |c|^2
        distances = point_norms - 2.0 * points @ centroids.T + (centroids * centroids).sum(axis=1)
        labels = distances.argmin(axis=1)
        sums = cp.zeros_like(centroids)
        cupyx.scatter_add(sums, labels, points)
        counts = cp.bincount(labels, minlength=k).astype(points.dtype)
        new_centroids = cp.where(counts[:, None] > 0, sums / cp.maximum(counts, 1)[:, None], centroids)
        shift = float(cp.abs(new_centroids - centroids).max())
        centroids = new_centroids
        if shift < tol:
            break
    return centroids, labels, it + 1


def main():
    n, dims, k = 2_000_000, 32, 256
    rng = cp.random.default_rng(1)
    centers = rng.standard_normal((k, dims), dtype=cp.float32) * 4
    points = centers[rng.integers(0, k, n)] + rng.standard_normal((n, dims), dtype=cp.float32)

    kmeans(points, k, 3)  # warm-up: kernels compiled and cached
    cp.cuda.Device().synchronize()
    start = time.perf_counter()
    centroids, labels, iterations = kmeans(points, k, 60, tol=0.0)
    cp.cuda.Device().synchronize()
    elapsed = time.perf_counter() - start
    sizes = cp.bincount(labels, minlength=k)
    print(f"{iterations} iterations, cluster sizes {int(sizes.min())}-{int(sizes.max())}")
    print(f"{elapsed * 1000 / iterations:.3f} ms/step")


if __name__ == "__main__":
    main()
