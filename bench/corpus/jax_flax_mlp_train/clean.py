"""A Flax MLP trained with optax.adamw: jitted train step, a fixed set of batches generated on the device;
JAX told not to preallocate most of the GPU, as its docs say for a process that shares the GPU."""

import os

os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"

import time  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import optax  # noqa: E402
from flax import linen as nn  # noqa: E402


class MLP(nn.Module):
    features: tuple = (2048, 2048, 2048, 10)

    @nn.compact
    def __call__(self, x):
        for f in self.features[:-1]:
            x = nn.relu(nn.Dense(f)(x))
        return nn.Dense(self.features[-1])(x)


model = MLP()
key = jax.random.PRNGKey(0)
params = model.init(key, jnp.ones((1, 512)))
tx = optax.adamw(1e-3)
opt_state = tx.init(params)
keys = jax.random.split(jax.random.PRNGKey(1), 8)
batches = [(jax.random.normal(k, (256, 512)), jax.random.randint(k, (256,), 0, 10)) for k in keys]


@jax.jit
def train_step(params, opt_state, x, y):
    def loss_fn(p):
        logits = model.apply(p, x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


for i in range(10):
    params, opt_state, loss = train_step(params, opt_state, *batches[i % 8])
loss.block_until_ready()
timed = 50
start = time.perf_counter()
for i in range(timed):
    params, opt_state, loss = train_step(params, opt_state, *batches[i % 8])
loss.block_until_ready()
elapsed = time.perf_counter() - start
print(f"loss {float(loss):.4f}")
print(f"{elapsed * 1000 / timed:.3f} ms/step")
