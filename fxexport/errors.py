"""Errors a user can cause: one clear line that names the culprit and says what to do."""


class FxExportError(Exception):
    """A user-facing export error. `str(error)` is the one line the CLI prints."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))

    @property
    def message(self) -> str:
        """The one-line message, the same as `str(error)`."""
        return str(self)
