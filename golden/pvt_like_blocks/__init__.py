"""FxModule, exported by fxexport. The model code is in module.py."""

from .module import FxModule

__all__ = ["FxModule"]
