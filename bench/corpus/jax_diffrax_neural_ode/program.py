"""A neural ODE fitted to noisy spirals, as in diffrax's own example: an Equinox MLP vector field (width 64, depth
2), solved with Tsit5 and an adaptive PID step-size controller, the loss vmapped over a batch of 256 trajectories
of 64 saved points, optax AdaBelief, an eqx.filter_jit step; the loss read back every 50 steps."""

import time

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import jax.random as jr
import optax


class Func(eqx.Module):
    mlp: eqx.nn.MLP

    def __init__(self, data_size, width_size, depth, *, key):
        self.mlp = eqx.nn.MLP(in_size=data_size, out_size=data_size, width_size=width_size, depth=depth,
                              activation=jax.nn.softplus, final_activation=jax.nn.tanh, key=key)

    def __call__(self, t, y, args):
        return self.mlp(y)


class NeuralODE(eqx.Module):
    func: Func

    def __init__(self, data_size, width_size, depth, *, key):
        self.func = Func(data_size, width_size, depth, key=key)

    def __call__(self, ts, y0):
        solution = diffrax.diffeqsolve(diffrax.ODETerm(self.func), diffrax.Tsit5(), t0=ts[0], t1=ts[-1],
                                       dt0=ts[1] - ts[0], y0=y0,
                                       stepsize_controller=diffrax.PIDController(rtol=1e-3, atol=1e-6),
                                       saveat=diffrax.SaveAt(ts=ts))
        return solution.ys


def spirals(n, length, key):
    ts = jnp.linspace(0, 10, length)
    y0_key, noise_key = jr.split(key)
    y0 = jr.uniform(y0_key, (n, 2), minval=-0.6, maxval=1)

    def field(t, y, args):
        x, v = y
        return jnp.stack([v, -0.5 * v - x])

    solver = diffrax.Tsit5()
    ys = jax.vmap(lambda y: diffrax.diffeqsolve(diffrax.ODETerm(field), solver, ts[0], ts[-1], 0.1, y,
                                                saveat=diffrax.SaveAt(ts=ts)).ys)(y0)
    return ts, ys + 0.02 * jr.normal(noise_key, ys.shape)


def main():
    data_key, model_key = jr.split(jr.PRNGKey(5678))
    ts, ys = spirals(256, 64, data_key)
    model = NeuralODE(2, 64, 2, key=model_key)
    optim = optax.adabelief(3e-3)
    opt_state = optim.init(eqx.filter(model, eqx.is_inexact_array))

    @eqx.filter_value_and_grad
    def grad_loss(model, ti, yi):
        y_pred = jax.vmap(model, in_axes=(None, 0))(ti, yi[:, 0])
        return jnp.mean((yi - y_pred) ** 2)

    @eqx.filter_jit
    def make_step(ti, yi, model, opt_state):
        loss, grads = grad_loss(model, ti, yi)
        updates, opt_state = optim.update(grads, opt_state)
        model = eqx.apply_updates(model, updates)
        return loss, model, opt_state

    for _ in range(3):
        loss, model, opt_state = make_step(ts, ys, model, opt_state)
    loss.block_until_ready()
    steps = 150
    start = time.perf_counter()
    for step in range(steps):
        loss, model, opt_state = make_step(ts, ys, model, opt_state)
        if (step + 1) % 50 == 0:
            print(f"step {step + 1}, loss {float(loss):.5f}")
    loss.block_until_ready()
    elapsed = time.perf_counter() - start
    print(f"{elapsed / steps * 1000:.3f} ms/step")


if __name__ == "__main__":
    main()
