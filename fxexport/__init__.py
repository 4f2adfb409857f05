"""fxexport: turn a torch.fx GraphModule into a standalone, importable Python package."""

from .api import ExportResult, __version__, export, generate
from .capture import trace
from .errors import FxExportError

__all__ = ["ExportResult", "FxExportError", "__version__", "export", "generate", "trace"]
