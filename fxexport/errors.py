"""Errors a user can cause: one clear line that names the culprit and says what to do."""

from __future__ import annotations

import logging
import sysconfig
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# Code that is not the user's: the standard library, installed packages (torch) and fxexport itself.
_LIBRARIES = {Path(sysconfig.get_paths()[key]).resolve() for key in ("stdlib", "platstdlib", "purelib", "platlib")}
_LIBRARIES.add(Path(__file__).resolve().parent)


class FxExportError(Exception):
    """A user-facing export error. `str(error)` is the one line the CLI prints."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))

    @property
    def message(self) -> str:
        """The one-line message, the same as `str(error)`."""
        return str(self)


def _is_user_file(filename: str) -> bool:
    """Not generated or frozen code (`<frozen importlib._bootstrap>`), nor in one of _LIBRARIES."""
    if filename.startswith("<"):
        return False
    path = Path(filename).resolve()
    return not any(path.is_relative_to(library) for library in _LIBRARIES)


def describe_exception(error: BaseException) -> str:
    """`Type: message (at file:line)`, with the innermost line of the user's own code that was running."""
    if isinstance(error, SyntaxError):
        return f"{type(error).__name__}: {error.msg} (at {error.filename}:{error.lineno})"
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if _is_user_file(frame.filename)]
    where = f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""
    return f"{type(error).__name__}: {error}{where}"


class _Hold(logging.Filter):
    """Keeps each record its handlers see, in order, and lets none through."""

    def __init__(self) -> None:
        super().__init__()
        self.records: dict[int, logging.LogRecord] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        """Keep `record` for later; print nothing now."""
        self.records.setdefault(id(record), record)
        return False


@contextmanager
def held_torch_logs() -> Iterator[None]:
    """Hold what torch logs meanwhile: logged when the block succeeds, dropped when it raises.

    torch logs a traceback before raising in places (a damaged .pt2 archive, an op that fails on
    fake tensors in torch.export); the exception is then reported once, as one line.
    """
    loggers = [logger for name, logger in list(logging.Logger.manager.loggerDict.items()) if name.split(".")[0] == "torch"]
    handlers = {handler for logger in loggers if isinstance(logger, logging.Logger) for handler in logger.handlers}
    hold = _Hold()
    for handler in handlers:
        handler.addFilter(hold)
    try:
        yield
    finally:
        for handler in handlers:
            handler.removeFilter(hold)
    for record in hold.records.values():  # only reached when the block succeeded
        logging.getLogger(record.name).handle(record)


@contextmanager
def user_code(action: str, hint: str = "") -> Iterator[None]:
    """Run the user's code: whatever it raises (even SystemExit) becomes FxExportError `{action}: Type: ...{hint}`.

    FxExportError passes through unchanged; KeyboardInterrupt is not caught. What torch logs
    meanwhile is held (see held_torch_logs).
    """
    try:
        with held_torch_logs():
            yield
    except FxExportError:
        raise
    except (Exception, SystemExit) as error:
        raise FxExportError(f"{action}: {describe_exception(error)}{hint}") from error
