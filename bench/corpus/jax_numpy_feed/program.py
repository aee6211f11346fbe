"""A JAX logistic-regression-style model trained on batches made with NumPy on the host each step (sampled,
standardised), passed straight to the jitted step, with the loss printed every step."""

import time

import jax
import jax.numpy as jnp
import numpy as np

rng = np.random.default_rng(0)
features, batch = 1024, 4096
true_w = rng.standard_normal(features).astype(np.float32)


def make_batch():
    x = rng.standard_normal((batch, features)).astype(np.float32)
    x = (x - x.mean(0)) / (x.std(0) + 1e-6)
    y = (x @ true_w + 0.1 * rng.standard_normal(batch) > 0).astype(np.float32)
    return x, y


@jax.jit
def step(params, x, y):
    def loss_fn(p):
        h = jax.nn.gelu(x @ p["w1"])
        logits = (h @ p["w2"]).squeeze(-1)
        return jnp.mean(jnp.logaddexp(0.0, logits) - y * logits)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    return jax.tree_util.tree_map(lambda p, g: p - 0.05 * g, params, grads), loss


key1, key2 = jax.random.split(jax.random.PRNGKey(0))
params = {"w1": jax.random.normal(key1, (features, 512)) / 32, "w2": jax.random.normal(key2, (512, 1)) / 22}
for i in range(5):
    params, loss = step(params, *make_batch())
    print(f"step {i} loss {float(loss):.4f}")
timed = 40
start = time.perf_counter()
for i in range(timed):
    params, loss = step(params, *make_batch())
    print(f"step {i + 5} loss {float(loss):.4f}")
elapsed = time.perf_counter() - start
print(f"{elapsed * 1000 / timed:.3f} ms/step")
