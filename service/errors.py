"""The one exception hierarchy of Synopsis.

```
SynopsisError                 base of everything Synopsis raises on purpose        [splitters]
├── ConfigurationError        a setting is missing, malformed or contradictory     [splitters]
├── StackError                the local Weaviate/Ollama stack cannot be built, started or reached
│   ├── BuildError            building a server binary or preparing model files failed
│   └── PortInUseError        a port the local stack needs is taken by another process
├── LoaderError               a source cannot be read or converted to Markdown     [splitters]
│                             (names the source)
│   └── UnsafeUrlError        a URL is refused before connecting: not http(s), or its host
│                             is or resolves to a loopback, private or metadata address
│                                                                                  [splitters]
├── SplitterError             Markdown cannot be split as asked                    [splitters]
├── ModelError                the chat or embedding model failed or answered unusably
│                                                                                  [splitters]
├── StoreError                Weaviate rejected a read or a write
│   └── EmbeddingMismatchError the collection was indexed with another embedding model
├── SearchError               a search request is invalid
├── RequestLimitError         a request exceeds a configured limit (names the field)
├── TooManyRequestsError      the caller has as many model calls running as it may
├── SourceError               an indexed or registered source cannot be given as asked
│   ├── SourceNotFoundError   no such source is indexed (or registered)
│   ├── SourceExistsError     a source of that name is registered already
│   ├── InvalidSourceError    a source to register is malformed or not allowed (names the field)
│   └── SourceNotReadyError   its ingest has not finished (summaries still pending)
│       └── SourceBusyError   another ingest or delete of it holds it (its lease)
├── JobError                  an ingest job cannot be found, changed or queued
│   ├── JobNotFoundError      no such job (or not the caller's)
│   ├── JobStateError         the job's state does not allow it (cancel a done job, …)
│   ├── QueueFullError        the job queue or the caller's share of it is full
│   └── JobsUnavailableError  this process has no job queue (an app built without jobs)
├── ConversationLimitError    the caller has as many conversations as its key may keep
├── QuerySetError             an evaluation question set is unreadable or malformed (names the line)
└── RemoteError               a Synopsis server called over HTTP refused a request or cannot be
                              reached (names the URL, the status, the server's detail and
                              request id)
```

[splitters]: defined in `splitters.base.errors`, the lowest package, because `splitters`
and `loaders` raise them (`ModelError`: an image captioner raises it and the PDF loader
catches it) and neither may import `service`; re-exported here. The others are defined
here. Every class above is importable from here and is a `SynopsisError`.

Each edge translates these once: the CLI prints one line and exits non-zero, the
HTTP API maps them to a status code and a JSON body.
"""

from __future__ import annotations

from splitters.base.errors import (
    ConfigurationError,
    LoaderError,
    ModelError,
    SplitterError,
    SynopsisError,
    UnsafeUrlError,
)

__all__ = [
    "BuildError",
    "ConfigurationError",
    "ConversationLimitError",
    "EmbeddingMismatchError",
    "InvalidSourceError",
    "JobError",
    "JobNotFoundError",
    "JobStateError",
    "JobsUnavailableError",
    "LoaderError",
    "ModelError",
    "PortInUseError",
    "QuerySetError",
    "QueueFullError",
    "RemoteError",
    "RequestLimitError",
    "SearchError",
    "SourceBusyError",
    "SourceError",
    "SourceExistsError",
    "SourceNotFoundError",
    "SourceNotReadyError",
    "SplitterError",
    "StackError",
    "StoreError",
    "SynopsisError",
    "TooManyRequestsError",
    "UnsafeUrlError",
]


class StackError(SynopsisError):
    """The local stack (Weaviate, Ollama) cannot be built, started or reached."""


class BuildError(StackError):
    """Building a server binary or preparing model files failed."""


class PortInUseError(StackError):
    """A port the local stack needs is already taken by another process."""

    def __init__(self, message: str, *, port: int) -> None:
        super().__init__(message)
        self.port = port


class StoreError(SynopsisError):
    """Weaviate rejected a read or a write."""


class EmbeddingMismatchError(StoreError):
    """The collection was indexed with another embedding model or dimension."""


class SearchError(SynopsisError):
    """A search request is invalid."""


class QuerySetError(SynopsisError):
    """An evaluation question set cannot be read or a line of it is malformed."""


class RequestLimitError(SynopsisError):
    """A request exceeds a limit of the settings; `field` names what, `too_large` when
    the limit is a size (HTTP 413) rather than a count or a length (HTTP 400)."""

    def __init__(self, message: str, *, field: str, too_large: bool = False) -> None:
        super().__init__(message)
        self.field = field
        self.too_large = too_large


class TooManyRequestsError(SynopsisError):
    """The caller (an API key) has as many model calls running or waiting as it may; try
    again after `retry_after` s."""

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class SourceError(SynopsisError):
    """An indexed or registered source cannot be given as asked."""


class SourceNotFoundError(SourceError):
    """No source of this name is indexed (or, for a registered source, registered)."""


class SourceExistsError(SourceError):
    """A source of this name is registered already."""


class InvalidSourceError(SourceError):
    """A source to register is malformed or not allowed here; `field` names what."""

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


class SourceNotReadyError(SourceError):
    """The source's ingest has not finished: some of its summaries are still pending."""


class SourceBusyError(SourceNotReadyError):
    """Another ingest or delete of the source holds it (`service.ingest.locks`)."""


class JobError(SynopsisError):
    """An ingest job cannot be found, changed or queued."""


class JobNotFoundError(JobError):
    """No job has this id (or it belongs to another API key)."""


class JobStateError(JobError):
    """The job's state does not allow what was asked."""


class QueueFullError(JobError):
    """The job queue, or the caller's share of it, is full; try again after `retry_after` s."""

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class JobsUnavailableError(JobError):
    """This process has no job queue: its app was built over a core without jobs."""


class ConversationLimitError(SynopsisError):
    """The caller's key has as many conversations as it may keep
    (`SYNOPSIS_CONVERSATIONS_PER_KEY`); delete one, or wait `retry_after` s for one to
    expire."""

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class RemoteError(SynopsisError):
    """A Synopsis server called over HTTP refused a request or could not be reached.

    `status_code` is the response's status (None when no response came: the connection
    failed or timed out); `detail` and `request_id` are the server's error body's, so the
    request can be found in the server's log.
    """

    def __init__(
        self,
        message: str,
        *,
        url: str,
        status_code: int | None = None,
        detail: str = "",
        request_id: str = "",
    ) -> None:
        super().__init__(message)
        self.url = url
        self.status_code = status_code
        self.detail = detail
        self.request_id = request_id
