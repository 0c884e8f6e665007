"""The error of a result document that cannot be read back: apart from the checks of its
shape (``document_check``, pydantic models), so writing a document imports none of them."""

from __future__ import annotations


class DocumentError(ValueError):
    """A file that is not a result document this version can read: what is wrong, and where
    (a JSON path) when one field is."""

    def __init__(self, problem: str, at: str | None = None) -> None:
        super().__init__(problem if at is None else f"{problem} (at {at})")
        self.problem = problem
        self.at = at
