"""A Flax CNN classifier trained with optax.adam on 32x32 images (batch 256, on the device); the script asks XLA
for the platform allocator so that JAX does not take the whole GPU and other processes can share it."""

import os

os.environ["XLA_PYTHON_CLIENT_ALLOCATOR"] = "platform"  # allocate what is needed, give it back when done

import time  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import optax  # noqa: E402
from flax import linen as nn  # noqa: E402


class CNN(nn.Module):
    @nn.compact
    def __call__(self, x):
        for features in (64, 128, 256):
            x = nn.relu(nn.Conv(features, (3, 3))(x))
            x = nn.relu(nn.Conv(features, (3, 3))(x))
            x = nn.max_pool(x, (2, 2), strides=(2, 2))
        x = x.reshape((x.shape[0], -1))
        x = nn.relu(nn.Dense(512)(x))
        return nn.Dense(10)(x)


model = CNN()
params = model.init(jax.random.PRNGKey(0), jnp.ones((1, 32, 32, 3)))
tx = optax.adam(1e-3)
opt_state = tx.init(params)
keys = jax.random.split(jax.random.PRNGKey(1), 4)
batches = [(jax.random.normal(k, (256, 32, 32, 3)), jax.random.randint(k, (256,), 0, 10)) for k in keys]


@jax.jit
def train_step(params, opt_state, x, y):
    def loss_fn(p):
        logits = model.apply(p, x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


for i in range(10):
    params, opt_state, loss = train_step(params, opt_state, *batches[i % 4])
loss.block_until_ready()
timed = 100
start = time.perf_counter()
for i in range(timed):
    params, opt_state, loss = train_step(params, opt_state, *batches[i % 4])
loss.block_until_ready()
elapsed = time.perf_counter() - start
print(f"loss {float(loss):.4f}")
print(f"{elapsed * 1000 / timed:.3f} ms/step")
