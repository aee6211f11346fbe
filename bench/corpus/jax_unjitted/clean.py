"""An MLP classifier trained with Adam written by hand in plain JAX: the loss, jax.value_and_grad and the
parameter update compiled together with jax.jit, one XLA program per step."""

import time

import jax
import jax.numpy as jnp


def init_mlp(key, sizes):
    params = []
    for k, m, n in zip(jax.random.split(key, len(sizes) - 1), sizes[:-1], sizes[1:]):
        params.append({"w": jax.random.normal(k, (m, n)) * jnp.sqrt(2.0 / m), "b": jnp.zeros(n)})
    return params


def forward(params, x):
    for layer in params[:-1]:
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def loss_fn(params, x, y):
    logits = forward(params, x)
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))


def adam(params, grads, m, v, t, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8):
    m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
    v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
    m_hat = jax.tree_util.tree_map(lambda m: m / (1 - b1**t), m)
    v_hat = jax.tree_util.tree_map(lambda v: v / (1 - b2**t), v)
    params = jax.tree_util.tree_map(lambda p, m, v: p - lr * m / (jnp.sqrt(v) + eps), params, m_hat, v_hat)
    return params, m, v


@jax.jit
def train_step(params, m, v, t, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    params, m, v = adam(params, grads, m, v, t)
    return params, m, v, loss


key, data_key = jax.random.split(jax.random.PRNGKey(0))
params = init_mlp(key, [784, 1024, 1024, 10])
m = jax.tree_util.tree_map(jnp.zeros_like, params)
v = jax.tree_util.tree_map(jnp.zeros_like, params)
batches = []
for k in jax.random.split(data_key, 4):
    kx, ky = jax.random.split(k)
    batches.append((jax.random.normal(kx, (2048, 784)), jax.nn.one_hot(jax.random.randint(ky, (2048,), 0, 10), 10)))

warmup, timed = 10, 50
for t in range(1, warmup + 1):
    params, m, v, loss = train_step(params, m, v, t, *batches[t % 4])
loss.block_until_ready()
start = time.perf_counter()
for t in range(warmup + 1, warmup + timed + 1):
    params, m, v, loss = train_step(params, m, v, t, *batches[t % 4])
loss.block_until_ready()
elapsed = time.perf_counter() - start
print(f"loss {float(loss):.4f}")
print(f"{elapsed * 1000 / timed:.3f} ms/step")
