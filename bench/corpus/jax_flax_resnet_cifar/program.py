"""A CIFAR-style ResNet-20 in Flax (linen), laid out like the Flax ImageNet example's ResNet (conv, BatchNorm,
projection shortcuts) with a 3x3 stem for 32x32 images, trained with optax SGD (Nesterov momentum, warmup and
cosine schedule) and an L2 penalty in the loss. A flax.training TrainState carries the BatchNorm statistics. As in
the Flax MNIST example, the jitted apply_model computes the gradients, loss and accuracy of a batch and
update_model applies them with TrainState.apply_gradients; the data is a synthetic CIFAR-10-shaped NumPy set,
reshuffled with NumPy every epoch."""

import time
from functools import partial
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import linen as nn
from flax.training import train_state

ModuleDef = Any

num_classes = 10
num_train = 2560
batch_size = 128
num_epochs = 3
base_learning_rate = 0.1
weight_decay = 5e-4
CIFAR_MEAN = np.array([0.4914, 0.4822, 0.4465], np.float32)
CIFAR_STD = np.array([0.2470, 0.2435, 0.2616], np.float32)


class ResNetBlock(nn.Module):
    filters: int
    conv: ModuleDef
    norm: ModuleDef
    act: Callable
    strides: tuple = (1, 1)

    @nn.compact
    def __call__(self, x):
        residual = x
        y = self.conv(self.filters, (3, 3), self.strides)(x)
        y = self.norm()(y)
        y = self.act(y)
        y = self.conv(self.filters, (3, 3))(y)
        y = self.norm(scale_init=nn.initializers.zeros_init())(y)
        if residual.shape != y.shape:
            residual = self.conv(self.filters, (1, 1), self.strides, name="conv_proj")(residual)
            residual = self.norm(name="norm_proj")(residual)
        return self.act(residual + y)


class ResNet(nn.Module):
    stage_sizes: Sequence[int]
    num_classes: int
    num_filters: int = 16
    dtype: Any = jnp.float32

    @nn.compact
    def __call__(self, x, train: bool = True):
        conv = partial(nn.Conv, use_bias=False, dtype=self.dtype)
        norm = partial(nn.BatchNorm, use_running_average=not train, momentum=0.9, epsilon=1e-5, dtype=self.dtype)
        x = conv(self.num_filters, (3, 3), name="conv_init")(x)
        x = norm(name="bn_init")(x)
        x = nn.relu(x)
        for i, block_size in enumerate(self.stage_sizes):
            for j in range(block_size):
                strides = (2, 2) if i > 0 and j == 0 else (1, 1)
                x = ResNetBlock(self.num_filters * 2**i, strides=strides, conv=conv, norm=norm, act=nn.relu)(x)
        x = jnp.mean(x, axis=(1, 2))
        x = nn.Dense(self.num_classes, dtype=self.dtype)(x)
        return x


ResNet20 = partial(ResNet, stage_sizes=[3, 3, 3])


class TrainState(train_state.TrainState):
    batch_stats: Any


def create_train_state(rng, model, learning_rate_fn):
    @jax.jit
    def init(*args):
        return model.init(*args)

    variables = init({"params": rng}, jnp.ones((1, 32, 32, 3), jnp.float32))
    tx = optax.sgd(learning_rate=learning_rate_fn, momentum=0.9, nesterov=True)
    return TrainState.create(
        apply_fn=model.apply, params=variables["params"], tx=tx, batch_stats=variables["batch_stats"]
    )


@jax.jit
def apply_model(state, images, labels):
    """Computes gradients, loss and accuracy for a single batch."""

    def loss_fn(params):
        logits, new_model_state = state.apply_fn(
            {"params": params, "batch_stats": state.batch_stats}, images, train=True, mutable=["batch_stats"]
        )
        one_hot = jax.nn.one_hot(labels, num_classes)
        loss = optax.softmax_cross_entropy(logits, one_hot).mean()
        weight_l2 = sum(jnp.sum(x**2) for x in jax.tree_util.tree_leaves(params) if x.ndim > 1)
        loss = loss + 0.5 * weight_decay * weight_l2
        return loss, (logits, new_model_state)

    (loss, (logits, new_model_state)), grads = jax.value_and_grad(loss_fn, has_aux=True)(state.params)
    accuracy = jnp.mean(jnp.argmax(logits, -1) == labels)
    return grads, new_model_state["batch_stats"], loss, accuracy


def update_model(state, grads, batch_stats):
    return state.apply_gradients(grads=grads, batch_stats=batch_stats)


def train_epoch(state, train_ds, batch_size, rng):
    """Train for a single epoch."""
    train_ds_size = len(train_ds["image"])
    steps_per_epoch = train_ds_size // batch_size

    perms = rng.permutation(train_ds_size)
    perms = perms[: steps_per_epoch * batch_size]
    perms = perms.reshape((steps_per_epoch, batch_size))

    epoch_loss = []
    epoch_accuracy = []
    for perm in perms:
        batch_images = train_ds["image"][perm, ...]
        batch_labels = train_ds["label"][perm, ...]
        grads, batch_stats, loss, accuracy = apply_model(state, batch_images, batch_labels)
        state = update_model(state, grads, batch_stats)
        epoch_loss.append(loss)
        epoch_accuracy.append(accuracy)
    train_loss = np.mean(jax.device_get(epoch_loss))
    train_accuracy = np.mean(jax.device_get(epoch_accuracy))
    return state, train_loss, train_accuracy


def synthetic_cifar10(rng, n):
    images = rng.integers(0, 256, size=(n, 32, 32, 3), dtype=np.uint8)
    labels = rng.integers(0, num_classes, size=(n,)).astype(np.int32)
    images = (images.astype(np.float32) / 255.0 - CIFAR_MEAN) / CIFAR_STD
    return {"image": images, "label": labels}


np_rng = np.random.default_rng(0)
train_ds = synthetic_cifar10(np_rng, num_train)
steps_per_epoch = num_train // batch_size
learning_rate_fn = optax.warmup_cosine_decay_schedule(
    init_value=0.0,
    peak_value=base_learning_rate,
    warmup_steps=steps_per_epoch,
    decay_steps=num_epochs * steps_per_epoch,
)
model = ResNet20(num_classes=num_classes)
state = create_train_state(jax.random.PRNGKey(0), model, learning_rate_fn)

state, train_loss, train_accuracy = train_epoch(state, train_ds, batch_size, np_rng)
print(f"epoch 0 train_loss {train_loss:.4f} train_accuracy {train_accuracy * 100:.2f}")
start = time.perf_counter()
for epoch in range(1, num_epochs):
    state, train_loss, train_accuracy = train_epoch(state, train_ds, batch_size, np_rng)
    print(f"epoch {epoch} train_loss {train_loss:.4f} train_accuracy {train_accuracy * 100:.2f}")
elapsed = time.perf_counter() - start
print(f"{elapsed * 1000 / ((num_epochs - 1) * steps_per_epoch):.3f} ms/step")
