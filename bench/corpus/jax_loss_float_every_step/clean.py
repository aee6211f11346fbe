"""The same Flax CNN; the losses for the learning curve stay on the device and are read once, after the loop."""

import time

import jax
import jax.numpy as jnp
import optax
from flax import linen as nn


class CNN(nn.Module):
    @nn.compact
    def __call__(self, x):
        for features in (32, 64):
            x = nn.relu(nn.Conv(features, (3, 3))(x))
            x = nn.avg_pool(x, (2, 2), strides=(2, 2))
        x = x.reshape((x.shape[0], -1))
        x = nn.relu(nn.Dense(256)(x))
        return nn.Dense(10)(x)


model = CNN()
params = model.init(jax.random.PRNGKey(0), jnp.ones((1, 32, 32, 3)))
tx = optax.sgd(0.01, momentum=0.9)
opt_state = tx.init(params)
keys = jax.random.split(jax.random.PRNGKey(1), 16)
batches = [(jax.random.normal(k, (64, 32, 32, 3)), jax.random.randint(k, (64,), 0, 10)) for k in keys]


@jax.jit
def train_step(params, opt_state, images, labels):
    def loss_fn(p):
        logits = model.apply(p, images)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


history = []
for i in range(20):
    params, opt_state, loss = train_step(params, opt_state, *batches[i % 16])
    history.append(loss)
jax.block_until_ready(history)
steps = 500
start = time.perf_counter()
for i in range(steps):
    params, opt_state, loss = train_step(params, opt_state, *batches[i % 16])
    history.append(loss)
jax.block_until_ready(history)
elapsed = time.perf_counter() - start
history = [float(v) for v in jax.device_get(history)]
print(f"loss {history[-1]:.4f} (first {history[0]:.4f})")
print(f"{elapsed * 1000 / steps:.3f} ms/step")
