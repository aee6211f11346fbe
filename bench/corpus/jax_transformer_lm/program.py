"""A small decoder-only transformer language model (4 layers, 256 wide, 4 heads, context 128) trained in Flax
with optax (AdamW, gradient clipping). Token batches come from a NumPy generator on the host, one batch per
step; the jitted step returns the loss, which is printed every 25 steps."""

import time

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import linen as nn

VOCAB, CONTEXT, WIDTH, HEADS, LAYERS = 8192, 128, 256, 4, 4


class Block(nn.Module):
    @nn.compact
    def __call__(self, x, mask):
        h = nn.LayerNorm()(x)
        h = nn.SelfAttention(num_heads=HEADS, qkv_features=WIDTH)(h, mask=mask)
        x = x + h
        h = nn.LayerNorm()(x)
        h = nn.Dense(4 * WIDTH)(h)
        h = nn.gelu(h)
        return x + nn.Dense(WIDTH)(h)


class LM(nn.Module):
    @nn.compact
    def __call__(self, tokens):
        x = nn.Embed(VOCAB, WIDTH)(tokens)
        x = x + self.param("pos", nn.initializers.normal(0.02), (CONTEXT, WIDTH))
        mask = nn.make_causal_mask(tokens)
        for _ in range(LAYERS):
            x = Block()(x, mask)
        return nn.Dense(VOCAB)(nn.LayerNorm()(x))


def main():
    model = LM()
    params = model.init(jax.random.PRNGKey(0), jnp.zeros((1, CONTEXT), jnp.int32))
    tx = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(3e-4, weight_decay=0.01))
    opt_state = tx.init(params)

    def loss_fn(params, tokens):
        logits = model.apply(params, tokens[:, :-1])
        return optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:]).mean()

    @jax.jit
    def train_step(params, opt_state, tokens):
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    rng = np.random.default_rng(0)
    batch_size = 32

    def next_batch():
        return rng.integers(0, VOCAB, (batch_size, CONTEXT + 1), dtype=np.int32)

    for _ in range(3):
        params, opt_state, loss = train_step(params, opt_state, next_batch())
    loss.block_until_ready()

    steps = 100
    start = time.perf_counter()
    for step in range(steps):
        params, opt_state, loss = train_step(params, opt_state, next_batch())
        if step % 25 == 0:
            print(f"step {step:3d}  loss {float(loss):.4f}")
    loss.block_until_ready()
    elapsed = time.perf_counter() - start
    print(f"{elapsed * 1000 / steps:.3f} ms/step")


if __name__ == "__main__":
    main()
