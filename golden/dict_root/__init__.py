"""DictRoot, exported by fxexport. The model code is in module.py."""

from .module import DictRoot

__all__ = ["DictRoot"]
