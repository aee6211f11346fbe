"""XLA's kernels from a jitted MLP training step in JAX (fusions, cuBLAS GEMMs, reductions), inside NVTX-free
jit calls, for gpuscope's kernel classifier tests. Set XLA_PYTHON_CLIENT_PREALLOCATE=false so JAX allocates
what it uses. Exits 0 when it ran, 3 when JAX or a GPU is missing.
"""
import sys

try:
    import jax
    import jax.numpy as jnp
except ImportError:
    print("jax_kernels: JAX is not installed")
    sys.exit(3)


def loss(params, x, y):
    h = jax.nn.gelu(x @ params["w1"] + params["b1"])
    h = (h - h.mean(-1, keepdims=True)) / jnp.sqrt(h.var(-1, keepdims=True) + 1e-5)
    logits = h @ params["w2"]
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))


@jax.jit
def step(params, x, y):
    grads = jax.grad(loss)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - 1e-3 * g, params, grads)


def main():
    if not any(d.platform == "gpu" for d in jax.devices()):
        print("jax_kernels: no GPU for JAX")
        return 3
    k = jax.random.split(jax.random.PRNGKey(0), 4)
    params = {"w1": jax.random.normal(k[0], (1024, 4096)), "b1": jnp.zeros(4096),
              "w2": jax.random.normal(k[1], (4096, 1000))}
    x = jax.random.normal(k[2], (512, 1024))
    y = jax.nn.one_hot(jax.random.randint(k[3], (512,), 0, 1000), 1000)
    for _ in range(3):
        params = step(params, x, y)
    with jax.default_matmul_precision("bfloat16"):
        jax.block_until_ready(jax.jit(lambda a, b: a @ b)(x.astype(jnp.bfloat16), params["w1"].astype(jnp.bfloat16)))
    jax.block_until_ready(params)
    print("jax_kernels: ran")
    return 0


if __name__ == "__main__":
    sys.exit(main())
