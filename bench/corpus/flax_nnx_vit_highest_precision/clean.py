"""A small Vision Transformer (patch 4, 384 wide, 6 blocks of 6 heads) written with flax.nnx and trained as a
10-way image classifier with optax AdamW: 128 images of 32x32x3 a step, drawn once on the device with labels
from a random linear teacher, one nnx.jit train step. JAX's default matmul precision, and Flax's usual mixed
precision: the layers compute in bfloat16 (dtype) over float32 parameters (param_dtype), the loss in float32."""

import inspect
import time

import jax
import jax.numpy as jnp
import optax
from flax import nnx

IMAGE, PATCH, CHANNELS, CLASSES = 32, 4, 3, 10
WIDTH, DEPTH, HEADS, MLP_RATIO = 384, 6, 6, 4
BATCH, N_BATCHES = 128, 8
DTYPE = jnp.bfloat16  # compute dtype; parameters stay float32

ModuleList = getattr(nnx, "List", list)  # flax 0.12 wants lists of submodules wrapped in nnx.List


class Block(nnx.Module):
    def __init__(self, width, heads, *, rngs: nnx.Rngs):
        self.norm1 = nnx.LayerNorm(width, dtype=DTYPE, rngs=rngs)
        self.attn = nnx.MultiHeadAttention(
            num_heads=heads, in_features=width, decode=False, dtype=DTYPE, rngs=rngs
        )
        self.norm2 = nnx.LayerNorm(width, dtype=DTYPE, rngs=rngs)
        self.fc1 = nnx.Linear(width, MLP_RATIO * width, dtype=DTYPE, rngs=rngs)
        self.fc2 = nnx.Linear(MLP_RATIO * width, width, dtype=DTYPE, rngs=rngs)

    def __call__(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.fc2(nnx.gelu(self.fc1(self.norm2(x))))


class ViT(nnx.Module):
    def __init__(self, *, rngs: nnx.Rngs):
        n_patches = (IMAGE // PATCH) ** 2
        self.patch_embed = nnx.Conv(
            CHANNELS, WIDTH, kernel_size=(PATCH, PATCH), strides=(PATCH, PATCH), padding="VALID",
            dtype=DTYPE, rngs=rngs,
        )
        self.cls_token = nnx.Param(jnp.zeros((1, 1, WIDTH)))
        self.pos_embed = nnx.Param(0.02 * jax.random.normal(rngs.params(), (1, n_patches + 1, WIDTH)))
        self.blocks = ModuleList([Block(WIDTH, HEADS, rngs=rngs) for _ in range(DEPTH)])
        self.norm = nnx.LayerNorm(WIDTH, dtype=DTYPE, rngs=rngs)
        self.head = nnx.Linear(WIDTH, CLASSES, dtype=DTYPE, rngs=rngs)

    def __call__(self, images):
        x = self.patch_embed(images)  # (B, 8, 8, WIDTH)
        b = x.shape[0]
        x = x.reshape(b, -1, WIDTH)
        cls = jnp.broadcast_to(self.cls_token[...], (b, 1, WIDTH))
        x = jnp.concatenate([cls, x], axis=1) + self.pos_embed[...]
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x[:, 0]))


def make_data(key):
    k_img, k_teacher = jax.random.split(key)
    images = jax.random.normal(k_img, (N_BATCHES, BATCH, IMAGE, IMAGE, CHANNELS), jnp.float32)
    teacher = jax.random.normal(k_teacher, (IMAGE * IMAGE * CHANNELS, CLASSES)) / (IMAGE * IMAGE * CHANNELS) ** 0.5
    labels = jnp.argmax(images.reshape(N_BATCHES, BATCH, -1) @ teacher, axis=-1)
    return [(images[i], labels[i]) for i in range(N_BATCHES)]


def main():
    model = ViT(rngs=nnx.Rngs(0))
    tx = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(3e-4, weight_decay=0.05))
    try:
        optimizer = nnx.Optimizer(model, tx, wrt=nnx.Param)
    except TypeError:  # older flax: no wrt, parameters only
        optimizer = nnx.Optimizer(model, tx)
    # flax 0.11 changed Optimizer.update(grads) into Optimizer.update(model, grads)
    update_takes_model = "model" in inspect.signature(nnx.Optimizer.update).parameters

    @nnx.jit
    def train_step(model, optimizer, images, labels):
        def loss_fn(model):
            logits = model(images).astype(jnp.float32)
            return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

        loss, grads = nnx.value_and_grad(loss_fn)(model)
        if update_takes_model:
            optimizer.update(model, grads)
        else:
            optimizer.update(grads)
        return loss

    batches = make_data(jax.random.key(1))

    for i in range(3):
        loss = train_step(model, optimizer, *batches[i % N_BATCHES])
    loss.block_until_ready()

    steps = 60
    losses = []
    start = time.perf_counter()
    for i in range(steps):
        losses.append(train_step(model, optimizer, *batches[i % N_BATCHES]))
    losses[-1].block_until_ready()
    elapsed = time.perf_counter() - start

    losses = jnp.stack(losses)
    print(f"loss first {float(losses[0]):.4f}  last {float(losses[-1]):.4f}")
    print(f"{elapsed * 1000 / steps:.3f} ms/step")


if __name__ == "__main__":
    main()
