"""Evaluating a Flax CNN classifier over a validation set: each batch's logits are kept in a list and joined at
the end to compute the accuracy and the confusion counts, as in many evaluation scripts."""

import time

import jax
import jax.numpy as jnp
from flax import linen as nn


class CNN(nn.Module):
    classes: int = 1000

    @nn.compact
    def __call__(self, x):
        for width in (64, 128, 256):
            x = nn.relu(nn.Conv(width, (3, 3))(x))
            x = nn.max_pool(x, (2, 2), strides=(2, 2))
        x = x.mean(axis=(1, 2))
        return nn.Dense(self.classes)(x)


model = CNN()
params = model.init(jax.random.PRNGKey(0), jnp.ones((1, 64, 64, 3)))
batch = 512
keys = jax.random.split(jax.random.PRNGKey(1), 8)
images = [jax.random.normal(k, (batch, 64, 64, 3)) for k in keys]
labels = [jax.random.randint(k, (batch,), 0, 1000) for k in keys]


@jax.jit
def predict(params, x):
    return model.apply(params, x)


for i in range(5):  # compile and warm up
    predict(params, images[i % 8]).block_until_ready()

steps = 240
all_logits, all_labels = [], []
start = time.perf_counter()
for i in range(steps):
    logits = predict(params, images[i % 8])
    all_logits.append(logits)
    all_labels.append(labels[i % 8])
jax.block_until_ready(all_logits[-1])
elapsed = time.perf_counter() - start

logits = jnp.concatenate(all_logits)
truth = jnp.concatenate(all_labels)
accuracy = float((logits.argmax(-1) == truth).mean())
print(f"accuracy {accuracy:.4f} over {logits.shape[0]} images")
print(f"{elapsed * 1000 / steps:.3f} ms/step")
