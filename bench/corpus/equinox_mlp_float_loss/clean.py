"""An MLP classifier in Equinox (eqx.nn.MLP: 784 inputs, four hidden layers of 1024, 10 classes) trained with
optax AdamW under eqx.filter_jit. Each step draws a batch of 512 on the GPU with jax.random and labels it with a
fixed random linear teacher; the losses are kept in a list as device arrays and read once, after the loop."""

import time

import equinox as eqx
import jax
import jax.numpy as jnp
import jax.random as jr
import optax

batch_size = 512
key = jr.key(0)
key, model_key, teacher_key = jr.split(key, 3)
model = eqx.nn.MLP(in_size=784, out_size=10, width_size=1024, depth=4, key=model_key)
teacher = jr.normal(teacher_key, (784, 10))
optim = optax.adamw(1e-3, weight_decay=1e-4)
opt_state = optim.init(eqx.filter(model, eqx.is_array))


def loss_fn(model, x, y):
    logits = jax.vmap(model)(x)
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


@eqx.filter_jit
def train_step(model, opt_state, x, y):
    loss, grads = eqx.filter_value_and_grad(loss_fn)(model, x, y)
    updates, opt_state = optim.update(grads, opt_state, eqx.filter(model, eqx.is_array))
    model = eqx.apply_updates(model, updates)
    return model, opt_state, loss


def get_batch(key):
    x = jr.normal(key, (batch_size, 784))
    y = jnp.argmax(x @ teacher, axis=1)
    return x, y


losses = []
for _ in range(10):
    key, batch_key = jr.split(key)
    x, y = get_batch(batch_key)
    model, opt_state, loss = train_step(model, opt_state, x, y)
    losses.append(loss)
loss.block_until_ready()
steps = 300
start = time.perf_counter()
for _ in range(steps):
    key, batch_key = jr.split(key)
    x, y = get_batch(batch_key)
    model, opt_state, loss = train_step(model, opt_state, x, y)
    losses.append(loss)
loss.block_until_ready()
elapsed = time.perf_counter() - start
losses = [float(v) for v in jax.device_get(losses)]
print(f"loss {losses[-1]:.4f} (first {losses[0]:.4f})")
print(f"{elapsed * 1000 / steps:.3f} ms/step")
