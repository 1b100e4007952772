"""`HttpSummaryRetriever`: a running Synopsis as a LangChain retriever, over HTTP.

For a chain in another service: it calls `POST /search` with an API key and returns the
same Documents as the in-process `SummaryRetriever` (`service.retrievers.documents`).
It imports only httpx, langchain_core and pydantic (plus the light `service.errors`,
`service.query.hits` and `service.query.modes`), never the Weaviate or Ollama clients, so
it is cheap to use.

Every failure is a `RemoteError`: an error response (401 without a valid key, 400 for an
invalid request, 503 while the server's Weaviate or Ollama is down, …) names its status
and the server's `detail` and `request_id`; a connection error or timeout has no status.
"""

from __future__ import annotations

from typing import Any, Literal

import httpx
from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field, SecretStr, field_validator

from service.errors import RemoteError
from service.query.modes import Mode
from service.retrievers.documents import hit_document

__all__ = ["HttpSummaryRetriever"]

#: The retriever's fields that are `POST /search` body fields of the same name.
_BODY_FIELDS = (
    "k",
    "mode",
    "alpha",
    "fusion",
    "source",
    "source_prefix",
    "header_prefix",
    "title",
    "version",
    "max_vector_distance",
    "expand",
    "max_tokens",
)
_REQUEST_ID_HEADER = "X-Request-ID"
_DETAIL_CHARS = 300


class HttpSummaryRetriever(BaseRetriever):
    """Retrieves originals from a Synopsis server's `POST /search`.

    `base_url` is the server's root (`http://host:8000`); `api_key` a read key, sent as
    `Authorization: Bearer` (none for a server without keys). The search fields (`k`,
    `mode`, `alpha`, `fusion`, the filters `source`, `source_prefix`, `header_prefix`,
    `title`, the `version` to read (`*`: every one; None: the latest of each group), the
    relevance gate `max_vector_distance`, and the context options `expand`
    and `max_tokens`) mean what they mean in `POST /search`; each one left None takes the
    server's setting. With `expand="section"` each Document is its hit's whole section,
    and with `max_tokens` the Documents are the hits that fit that budget. `timeout` bounds
    each request, in seconds.

    Without `client` (`async_client`), each call opens and closes its own connection;
    pass a client to reuse its connection pool (the retriever does not close it).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    base_url: str
    # A str is kept as a SecretStr too (the validator below), so it stays out of repr.
    api_key: SecretStr | str | None = None
    k: int | None = Field(default=None, ge=1)
    mode: Mode | None = None
    alpha: float | None = Field(default=None, ge=0.0, le=1.0)
    fusion: Literal["relative", "ranked"] | None = None
    source: str | None = None
    source_prefix: str | None = None
    header_prefix: str | None = None
    title: str | None = None
    version: str | None = None
    max_vector_distance: float | None = Field(default=None, ge=0.0, le=2.0)
    expand: Literal["none", "section"] | None = None
    # POST /search's bounds (service.settings' MIN/MAX_CONTEXT_TOKENS, not imported here).
    max_tokens: int | None = Field(default=None, ge=500, le=100_000)
    timeout: float = Field(default=30.0, gt=0.0)
    client: httpx.Client | None = Field(default=None, repr=False, exclude=True)
    async_client: httpx.AsyncClient | None = Field(default=None, repr=False, exclude=True)

    @field_validator("api_key")
    @classmethod
    def _secret(cls, value: SecretStr | str | None) -> SecretStr | None:
        return SecretStr(value) if isinstance(value, str) else value

    @property
    def search_url(self) -> str:
        """The URL the retriever posts its searches to."""
        return f"{self.base_url.rstrip('/')}/search"

    def _body(self, query: str) -> dict[str, Any]:
        given = {name: getattr(self, name) for name in _BODY_FIELDS}
        return {
            "query": query,
            **{name: value for name, value in given.items() if value is not None},
        }

    def _headers(self) -> dict[str, str]:
        key = self.api_key
        if key is None:
            return {}
        secret = key.get_secret_value() if isinstance(key, SecretStr) else key
        return {"Authorization": f"Bearer {secret}"}

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        if self.client is not None:
            return self._search(self.client, query)
        with httpx.Client() as client:
            return self._search(client, query)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        if self.async_client is not None:
            return await self._asearch(self.async_client, query)
        async with httpx.AsyncClient() as client:
            return await self._asearch(client, query)

    def _search(self, client: httpx.Client, query: str) -> list[Document]:
        url = self.search_url
        try:
            response = client.post(
                url, json=self._body(query), headers=self._headers(), timeout=self.timeout
            )
        except httpx.TransportError as exc:  # connection refused, timeouts, bad URL scheme
            raise _unreachable(url, exc) from exc
        return _documents(url, response)

    async def _asearch(self, client: httpx.AsyncClient, query: str) -> list[Document]:
        url = self.search_url
        try:
            response = await client.post(
                url, json=self._body(query), headers=self._headers(), timeout=self.timeout
            )
        except httpx.TransportError as exc:
            raise _unreachable(url, exc) from exc
        return _documents(url, response)


def _unreachable(url: str, exc: httpx.TransportError) -> RemoteError:
    reason = str(exc) or type(exc).__name__
    return RemoteError(
        f"cannot reach Synopsis at {url}: {type(exc).__name__}: {reason}",
        url=url,
        detail=reason,
    )


def _documents(url: str, response: httpx.Response) -> list[Document]:
    """The Documents of a `POST /search` response, or the `RemoteError` it stands for."""
    if response.is_error:
        raise _refused(url, response)
    try:
        hits = response.json()
        if not isinstance(hits, list):
            raise TypeError(f"a JSON {type(hits).__name__}, not a list")
        return [hit_document(hit) for hit in hits]
    except (ValueError, KeyError, TypeError) as exc:
        # Not a Synopsis answer: another server at this URL, or a proxy's page.
        request_id = response.headers.get(_REQUEST_ID_HEADER, "")
        raise RemoteError(
            f"Synopsis at {url} answered {response.status_code} with a body that is not a "
            f"list of hits ({type(exc).__name__}: {exc})",
            url=url,
            status_code=response.status_code,
            detail=response.text[:_DETAIL_CHARS],
            request_id=request_id,
        ) from exc


def _refused(url: str, response: httpx.Response) -> RemoteError:
    """The error an error response stands for, with the server's detail and request id."""
    detail, request_id = "", ""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        detail = str(body.get("detail") or "")
        request_id = str(body.get("request_id") or "")
    # A proxy's error page, or a body without detail: its text stands in.
    detail = detail or response.text.strip()[:_DETAIL_CHARS] or response.reason_phrase
    request_id = request_id or response.headers.get(_REQUEST_ID_HEADER, "")
    status = f"{response.status_code} {response.reason_phrase}".strip()
    named = f" (request id {request_id})" if request_id else ""
    return RemoteError(
        f"Synopsis at {url} answered {status}: {detail}{named}",
        url=url,
        status_code=response.status_code,
        detail=detail,
        request_id=request_id,
    )
