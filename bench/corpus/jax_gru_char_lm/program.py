"""A character-level language model in Flax, trained as its users write one: an embedding, a GRU layer run over the
sequence by `nn.RNN` (a `lax.scan` inside the jitted step), a dense readout over 256 byte values, optax.adam, a
jitted train step over batches of 64 sequences of 128 characters drawn on the device, and the loss printed every
20 steps."""

import time

import jax
import jax.numpy as jnp
import optax
from flax import linen as nn

vocab, hidden, seq_len, batch = 256, 512, 128, 64


class CharGRU(nn.Module):
    @nn.compact
    def __call__(self, tokens):
        x = nn.Embed(vocab, 128)(tokens)
        x = nn.RNN(nn.GRUCell(features=hidden))(x)
        return nn.Dense(vocab)(x)


model = CharGRU()
params = model.init(jax.random.PRNGKey(0), jnp.zeros((1, seq_len), jnp.int32))
tx = optax.adam(2e-3)
opt_state = tx.init(params)
# A corpus of bytes on the device; each batch is 64 random windows of it.
text = jax.random.randint(jax.random.PRNGKey(1), (1 << 20,), 0, vocab)


@jax.jit
def get_batch(key):
    starts = jax.random.randint(key, (batch,), 0, text.shape[0] - seq_len - 1)
    windows = jax.vmap(lambda s: jax.lax.dynamic_slice(text, (s,), (seq_len + 1,)))(starts)
    return windows[:, :-1], windows[:, 1:]


@jax.jit
def train_step(params, opt_state, x, y):
    def loss_fn(p):
        logits = model.apply(p, x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


key = jax.random.PRNGKey(2)
for step in range(10):
    key, sub = jax.random.split(key)
    params, opt_state, loss = train_step(params, opt_state, *get_batch(sub))
loss.block_until_ready()
timed = 100
start = time.perf_counter()
for step in range(timed):
    key, sub = jax.random.split(key)
    params, opt_state, loss = train_step(params, opt_state, *get_batch(sub))
    if step % 20 == 0:
        print(f"step {step}: loss {float(loss):.4f}")
loss.block_until_ready()
elapsed = time.perf_counter() - start
print(f"{elapsed * 1000 / timed:.3f} ms/step")
