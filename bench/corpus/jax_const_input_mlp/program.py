"""A jitted JAX MLP regression step on a constant input, no data loading: plain JAX, SGD by hand."""

import time

import jax
import jax.numpy as jnp


def init(key, sizes):
    keys = jax.random.split(key, len(sizes) - 1)
    return [(jax.random.normal(k, (m, n)) / jnp.sqrt(m), jnp.zeros(n)) for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


def predict(params, x):
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


@jax.jit
def update(params, x, y):
    loss, grads = jax.value_and_grad(lambda p: jnp.mean((predict(p, x) - y) ** 2))(params)
    return [(w - 1e-2 * gw, b - 1e-2 * gb) for (w, b), (gw, gb) in zip(params, grads)], loss


params = init(jax.random.PRNGKey(0), [256, 512, 512, 1])
x = jax.random.normal(jax.random.PRNGKey(1), (512, 256))
y = jnp.sin(x[:, :1])
for _ in range(20):
    params, loss = update(params, x, y)
loss.block_until_ready()
timed = 200
start = time.perf_counter()
for _ in range(timed):
    params, loss = update(params, x, y)
loss.block_until_ready()
elapsed = time.perf_counter() - start
print(f"loss {float(loss):.5f}")
print(f"{elapsed * 1000 / timed:.3f} ms/step")
