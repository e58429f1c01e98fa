"""The one error hierarchy of xhelio.

Three families, so callers can react by kind rather than by message:

* `UserError`: the request itself is wrong (bad time range, unknown dataset or
  parameter, a path outside the export folder). Fix the input and retry.
* `DataUnavailableError`: the request is valid but there is nothing to return (no data
  in the range, dataset offline). Try another range or dataset.
* `ServerError`: the remote service failed (HTTP 5xx, timeouts, truncated streams,
  malformed responses). Retry later or use another source.

Every message names what failed and what to do next. This module imports nothing from
xhelio.
"""

from __future__ import annotations

from datetime import datetime

__all__ = [
    "BadTimeRangeError",
    "CancelledError",
    "ConfigError",
    "DataUnavailableError",
    "NoDataError",
    "RateLimitedError",
    "RequestDeadlineError",
    "RequestTooLargeError",
    "SandboxError",
    "ServerError",
    "ServerUnreachableError",
    "SessionMemoryError",
    "TruncatedResponseError",
    "UnknownDatasetError",
    "UnknownParameterError",
    "UserError",
    "XhelioError",
]


class XhelioError(Exception):
    """Base of every error xhelio raises on purpose."""

    kind: str = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def to_dict(self) -> dict[str, str]:
        """Return the structured form sent to models and JSON clients."""
        return {"status": "error", "type": type(self).__name__, "message": self.message}


class UserError(XhelioError):
    """The caller asked for something invalid; changing the request fixes it."""

    kind = "user"


class ConfigError(UserError):
    """A configuration value (env var or config file) is invalid."""


class BadTimeRangeError(UserError):
    """A time range could not be parsed, or is reversed or empty."""


class UnknownDatasetError(UserError):
    """The dataset id is not in the catalog or not known to the server."""

    def __init__(self, dataset_id: str, suggestions: list[str] | None = None) -> None:
        hint = ""
        if suggestions:
            hint = f" Did you mean: {', '.join(suggestions[:5])}?"
        super().__init__(
            f"Unknown dataset '{dataset_id}'.{hint} "
            "Use `xhelio catalog search WORDS` to find dataset ids."
        )
        self.dataset_id = dataset_id
        self.suggestions = suggestions or []


class UnknownParameterError(UserError):
    """The parameter is not one of the dataset's parameters."""

    def __init__(
        self,
        dataset_id: str,
        parameter: str,
        available: list[str],
        nearest: list[str] | None = None,
    ) -> None:
        shown = ", ".join(available[:15]) + (" ..." if len(available) > 15 else "")
        near = f" Nearest: {', '.join(nearest)}." if nearest else ""
        super().__init__(
            f"Dataset '{dataset_id}' has no parameter '{parameter}'.{near} Available: {shown}. "
            f"Use `xhelio catalog show {dataset_id}` to list them with units."
        )
        self.dataset_id = dataset_id
        self.parameter = parameter
        self.available = available
        self.nearest = nearest or []


class SandboxError(UserError):
    """Generated code was rejected or failed inside the sandbox."""

    def __init__(self, message: str, category: str) -> None:
        super().__init__(message)
        self.category = category

    def to_dict(self) -> dict[str, str]:
        """Return the structured form, including the containment category."""
        return {**super().to_dict(), "category": self.category}


class SessionMemoryError(UserError):
    """Loading a request into memory would exceed the configured memory budget."""


class CancelledError(XhelioError):
    """The user (or the caller) cancelled the operation; nothing is wrong with it."""

    kind = "cancelled"


class DataUnavailableError(XhelioError):
    """The request is valid but the data cannot be provided."""

    kind = "data"


class NoDataError(DataUnavailableError):
    """The server has no data for this dataset in the requested range."""

    proven_until: datetime | None = None
    """Set when the emptiness itself is not proven past this time (an answer whose end
    could not be verified): a cache must not keep the range as empty for good."""


class ServerError(XhelioError):
    """A remote service failed or answered with something unusable."""

    kind = "server"

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class ServerUnreachableError(ServerError):
    """The server could not be reached (connection refused, DNS, timeout)."""


class TruncatedResponseError(ServerError):
    """A response stream ended before all promised data arrived."""


class RequestTooLargeError(ServerError):
    """The server refused the request as too large (HAPI 1408); ask for less."""


class RequestDeadlineError(ServerUnreachableError):
    """A whole request took longer than the deadline (a server trickling its answer)."""


class RateLimitedError(ServerError):
    """The server asked us to slow down (HTTP 429, or 503 with Retry-After)."""

    def __init__(
        self, message: str, status_code: int | None = 429, retry_after: float | None = None
    ) -> None:
        super().__init__(message, status_code)
        self.retry_after = retry_after
