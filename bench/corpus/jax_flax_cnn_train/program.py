"""A small Flax CNN trained on 32x32 RGB images with optax (AdamW, cosine schedule): the jitted step donates
the parameters and optimizer state, the dataset lives on the GPU, each epoch draws its batch order from a
PRNG key, and the loss is read back once per epoch for the log."""

import time

import jax
import jax.numpy as jnp
import optax
from flax import linen as nn


class CNN(nn.Module):
    @nn.compact
    def __call__(self, x):
        for features in (64, 128, 256):
            x = nn.Conv(features, (3, 3))(x)
            x = nn.relu(x)
            x = nn.Conv(features, (3, 3))(x)
            x = nn.relu(x)
            x = nn.max_pool(x, (2, 2), strides=(2, 2))
        x = x.mean(axis=(1, 2))
        x = nn.relu(nn.Dense(256)(x))
        return nn.Dense(10)(x)


batch_size, steps_per_epoch = 256, 40
model = CNN()
key = jax.random.PRNGKey(0)
params = model.init(key, jnp.ones((1, 32, 32, 3)))
schedule = optax.cosine_decay_schedule(1e-3, decay_steps=10 * steps_per_epoch)
tx = optax.adamw(schedule, weight_decay=1e-4)
opt_state = tx.init(params)
data_key, label_key = jax.random.split(jax.random.PRNGKey(1))
images = jax.random.normal(data_key, (batch_size * steps_per_epoch, 32, 32, 3))
labels = jax.random.randint(label_key, (batch_size * steps_per_epoch,), 0, 10)


def loss_fn(params, x, y):
    logits = model.apply(params, x)
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


def train_step(params, opt_state, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


train_step = jax.jit(train_step, donate_argnums=(0, 1))


def run_epoch(params, opt_state, epoch_key):
    order = jax.random.permutation(epoch_key, images.shape[0]).reshape(steps_per_epoch, batch_size)
    for idx in order:
        params, opt_state, loss = train_step(params, opt_state, images[idx], labels[idx])
    return params, opt_state, loss


params, opt_state, loss = run_epoch(params, opt_state, jax.random.PRNGKey(10))
print(f"epoch 0 loss {float(loss):.4f}")
epochs = 3
start = time.perf_counter()
for epoch in range(1, epochs + 1):
    params, opt_state, loss = run_epoch(params, opt_state, jax.random.PRNGKey(10 + epoch))
    print(f"epoch {epoch} loss {float(loss):.4f}")
elapsed = time.perf_counter() - start
print(f"{elapsed * 1000 / (epochs * steps_per_epoch):.3f} ms/step")
