"""Put first on PYTHONPATH by `gpuscope record --torch` (or --cupy, --jax) and `gpuscope apply`: arms gpuscope's
PyTorch bridge for the moment torch is imported (its CuPy bridge for cupy, its JAX bridge for jax), with no change
to the program, and under `gpuscope apply` sets the plan's XLA variables before the program's code runs (the JAX
bridge says at exit whether they took hold); then runs the sitecustomize module this one shadows, if any."""

import importlib
import importlib.abc
import importlib.machinery
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _install_torch_bridge():
    import gpuscope_torch

    gpuscope_torch.install_from_environment()


def _install_cupy_bridge():
    import gpuscope_cupy

    gpuscope_cupy.install_from_environment()


def _install_jax_bridge():
    import gpuscope_jax

    gpuscope_jax.install_from_environment()


def _check_xla_settings():
    from gpuscope_jax import apply

    apply.check_at_exit()


def _set_xla_settings(plan):
    """The plan's XLA variables, set before the program's own code runs; whether any wait for jax's import."""
    try:
        from gpuscope_jax import apply

        return apply.set_variables(plan)
    except Exception as error:
        sys.stderr.write(f"gpuscope: XLA's settings not applied: {error!r}\n")
        return False


def _install_all(installs):
    """One arm per module (an import finds the first armed finder only): each install on its own."""

    def install():
        for each in installs:
            try:
                each()
            except Exception as error:
                sys.stderr.write(f"gpuscope: {each.__name__} failed: {error!r}\n")

    return install


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds a module like the path finder does, and installs a bridge once the module's own import has run."""

    def __init__(self, module, install, what):
        self._module, self._install, self._what = module, install, what

    def find_spec(self, name, path=None, target=None):
        if name != self._module:
            return None
        sys.meta_path.remove(self)  # once is enough; later imports come from sys.modules
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _InstallingLoader(spec.loader, self._install, self._what)
        return spec


class _InstallingLoader(importlib.abc.Loader):
    def __init__(self, inner, install, what):
        self._inner, self._install, self._what = inner, install, what

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module):
        self._inner.exec_module(module)
        try:
            self._install()
        except Exception as error:  # the program must run on whatever happens to the bridge
            sys.stderr.write(f"gpuscope: {self._what} bridge not installed: {error!r}\n")

    def __getattr__(self, name):  # get_resource_reader, is_package, … as the real loader has them
        return getattr(self._inner, name)


def _run_shadowed_sitecustomize():
    """Imports the next sitecustomize on the path (a virtualenv's, a distribution's) as Python would have."""
    ours = sys.modules.pop("sitecustomize", None)
    saved = list(sys.path)
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    try:
        importlib.import_module("sitecustomize")
    except ImportError:
        pass
    except Exception as error:
        sys.stderr.write(f"gpuscope: the program's sitecustomize failed: {error!r}\n")
    finally:
        sys.path[:] = saved
        if ours is not None and "sitecustomize" not in sys.modules:
            sys.modules["sitecustomize"] = ours


def _arm(module, install, what):
    if module in sys.modules:  # imported already (by a .pth file): install now
        try:
            install()
        except Exception as error:
            sys.stderr.write(f"gpuscope: {what} bridge not installed: {error!r}\n")
    else:
        sys.meta_path.insert(0, _AfterImport(module, install, what))


def _note_uncaught_exception(output_dir):
    """Writes the last line of the exception the program dies of (exception-PID.txt in the recording's folder), so
    that the trace says why the run failed; Python's own hook then prints it as before."""
    previous = sys.excepthook

    def hook(kind, value, tb):
        try:
            import traceback

            lines = "".join(traceback.format_exception_only(kind, value)).strip().splitlines()
            with open(os.path.join(output_dir, f"exception-{os.getpid()}.txt"), "w") as out:
                out.write((lines[-1] if lines else kind.__name__) + "\n")
        except Exception:
            pass
        previous(kind, value, tb)

    sys.excepthook = hook


if os.environ.get("GPUSCOPE_OUTPUT_DIR"):
    _note_uncaught_exception(os.environ["GPUSCOPE_OUTPUT_DIR"])
if os.environ.get("GPUSCOPE_TORCH"):
    _arm("torch", _install_torch_bridge, "PyTorch")
if os.environ.get("GPUSCOPE_CUPY"):
    _arm("cupy", _install_cupy_bridge, "CuPy")
_jax_installs = [_install_jax_bridge] if os.environ.get("GPUSCOPE_JAX") else []
_modes = os.environ.get("GPUSCOPE_TORCH", "").split(",")
if "apply" in _modes and os.environ.get("GPUSCOPE_PLAN") and _set_xla_settings(os.environ["GPUSCOPE_PLAN"]):
    _jax_installs.append(_check_xla_settings)
if _jax_installs:
    _arm("jax", _install_all(_jax_installs), "JAX")
_run_shadowed_sitecustomize()
