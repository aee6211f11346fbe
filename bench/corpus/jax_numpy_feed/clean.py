"""A JAX logistic-regression-style model trained on batches made on the device with jax.random inside the
jitted step, the loss read back once at the end."""

import time

import jax
import jax.numpy as jnp

features, batch = 1024, 4096
true_w = jax.random.normal(jax.random.PRNGKey(42), (features,))


def make_batch(key):
    kx, kn = jax.random.split(key)
    x = jax.random.normal(kx, (batch, features))
    x = (x - x.mean(0)) / (x.std(0) + 1e-6)
    y = (x @ true_w + 0.1 * jax.random.normal(kn, (batch,)) > 0).astype(jnp.float32)
    return x, y


@jax.jit
def step(params, key):
    x, y = make_batch(key)

    def loss_fn(p):
        h = jax.nn.gelu(x @ p["w1"])
        logits = (h @ p["w2"]).squeeze(-1)
        return jnp.mean(jnp.logaddexp(0.0, logits) - y * logits)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    return jax.tree_util.tree_map(lambda p, g: p - 0.05 * g, params, grads), loss


key1, key2, data_key = jax.random.split(jax.random.PRNGKey(0), 3)
params = {"w1": jax.random.normal(key1, (features, 512)) / 32, "w2": jax.random.normal(key2, (512, 1)) / 22}
keys = jax.random.split(data_key, 45)
for i in range(5):
    params, loss = step(params, keys[i])
loss.block_until_ready()
timed = 40
start = time.perf_counter()
for i in range(timed):
    params, loss = step(params, keys[5 + i])
loss.block_until_ready()
elapsed = time.perf_counter() - start
print(f"loss {float(loss):.4f}")
print(f"{elapsed * 1000 / timed:.3f} ms/step")
