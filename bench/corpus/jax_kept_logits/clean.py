"""Evaluating a Flax CNN classifier over a validation set: each batch's correct predictions are counted on the
device as it goes, so nothing but a running count outlives its batch."""

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
def correct(params, x, y):
    return (model.apply(params, x).argmax(-1) == y).sum()


for i in range(5):  # compile and warm up
    correct(params, images[i % 8], labels[i % 8]).block_until_ready()

steps = 240
hits = jnp.zeros((), jnp.int32)
start = time.perf_counter()
for i in range(steps):
    hits = hits + correct(params, images[i % 8], labels[i % 8])
hits.block_until_ready()
elapsed = time.perf_counter() - start

print(f"accuracy {float(hits) / (steps * batch):.4f} over {steps * batch} images")
print(f"{elapsed * 1000 / steps:.3f} ms/step")
