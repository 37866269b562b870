"""The optional libraries of duals.sensitivity, imported when a function needs them.

>>> require("numpy", "this example").__name__
'numpy'
"""
import importlib

_INSTALL = {
    "scipy": 'pip install scipy (or pip install "duals[sensitivity]")',
    "matplotlib": 'pip install matplotlib (or pip install "duals[sensitivity]")',
}


def require(module, who):
    """require(module, who) -> the imported module, or ImportError saying who needs it and how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        raise ImportError(f"{who} needs {top}, which is not installed: "
                          f"{_INSTALL.get(top, f'pip install {top}')}") from exc
