"""A JAX training loop as in the JAX tutorials: an MLP on random data, jax.jit of the update, plain SGD,
no NVTX ranges. For checking the advisor on a program it was not written against."""
import jax
import jax.numpy as jnp


def init(key, sizes):
    keys = jax.random.split(key, len(sizes) - 1)
    return [(jax.random.normal(k, (m, n)) * (1 / m) ** 0.5, jnp.zeros(n)) for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


def loss(params, x, y):
    for w, b in params[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = params[-1]
    return jnp.mean((x @ w + b - y) ** 2)


@jax.jit
def update(params, x, y):
    grads = jax.grad(loss)(params, x, y)
    return [(w - 1e-3 * gw, b - 1e-3 * gb) for (w, b), (gw, gb) in zip(params, grads)]


params = init(jax.random.PRNGKey(0), [1024, 4096, 4096, 4096, 10])
key = jax.random.PRNGKey(1)
for step in range(50):
    key, kx = jax.random.split(key)
    x = jax.random.normal(kx, (2048, 1024))
    y = jnp.zeros((2048, 10))
    params = update(params, x, y)
print(float(loss(params, x, y)))
