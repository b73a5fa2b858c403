"""Errors that name exactly what is wrong with a user's input."""

from __future__ import annotations

from pathlib import Path


class RagdialError(Exception):
    """Base class for errors ragdial reports to the user without a traceback."""


class DataFormatError(RagdialError):
    """A data file that cannot be read: names the file, the record (index or id) and the field."""

    def __init__(
        self,
        path: str | Path,
        message: str,
        record: str | int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = str(path)
        self.record = record
        self.field = field
        self.reason = message
        where = self.path
        if record is not None:
            where += f", record {record}"
        if field is not None:
            where += f", field {field!r}"
        super().__init__(f"{where}: {message}")


class OptionError(RagdialError, ValueError):
    """An option a command or loader does not accept, or a value it cannot take."""
