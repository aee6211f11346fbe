"""Put first on PYTHONPATH by `gpuscope record --torch`: arms gpuscope's PyTorch bridge for the moment torch
is imported, with no change to the program, then runs the sitecustomize module this one shadows, if any."""

import importlib
import importlib.abc
import importlib.machinery
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


class _AfterTorchImport(importlib.abc.MetaPathFinder):
    """Finds torch like the path finder does, and installs the bridge once torch's own import has run."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)  # once is enough; later imports of torch come from sys.modules
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _InstallingLoader(spec.loader)
        return spec


class _InstallingLoader(importlib.abc.Loader):
    def __init__(self, inner):
        self._inner = inner

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module):
        self._inner.exec_module(module)
        try:
            import gpuscope_torch

            gpuscope_torch.install_from_environment()
        except Exception as error:  # the program must run on whatever happens to the bridge
            sys.stderr.write(f"gpuscope: PyTorch bridge not installed: {error!r}\n")

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


if "torch" in sys.modules:  # imported already (by a .pth file): install now
    import gpuscope_torch

    gpuscope_torch.install_from_environment()
else:
    sys.meta_path.insert(0, _AfterTorchImport())
_run_shadowed_sitecustomize()
