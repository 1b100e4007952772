"""`/documents`: index sources over HTTP (as jobs), browse and delete what is indexed.

`POST /documents` takes a JSON body (a URL to fetch and optionally crawl, or content
given inline) or a multipart upload of files, stores a `queued` job and answers `202`
with its `Location`; it never waits on the ingest (what it takes and how it is checked:
`service.api.document_create`). The response forms are `service.api.document_views`.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any
from urllib.parse import unquote_to_bytes

from litestar import Controller, Request, Response, delete, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.exceptions import NotFoundException, ValidationException
from litestar.params import FromPath, Parameter, SkipValidation
from litestar.status_codes import HTTP_200_OK, HTTP_202_ACCEPTED

from loaders.addresses import AddressPolicy
from service.api.crosssite import BODY_TYPES, JSON, MULTIPART
from service.api.document_create import DocumentCreateOperation, queue_documents
from service.api.document_views import (
    ChunkView,
    DocumentDetail,
    DocumentItem,
    DocumentSummaryView,
)
from service.api.jobs import JobQueueDependency, JobView, opened_for_jobs
from service.api.llm_work import LlmWork
from service.api.openapi import KEY_REQUIRED, error_responses
from service.api.schemas import DeletedSource
from service.api.security import caller_id, require_read, require_write
from service.jobs.store import JobStore
from service.query.document_summary import SummaryStyle
from service.synopsis import Synopsis

__all__ = [
    "SUMMARY_SUFFIX",
    "AddressPolicyDependency",
    "DocumentController",
    "provide_address_policy",
    "provide_job_store",
]

SynopsisDependency = NamedDependency[Synopsis]
JobStoreDependency = NamedDependency[JobStore]
# Not validated per request, unlike the others (an isinstance check): msgspec converts a
# dataclass field by field, which would rebuild the policy, and cannot (its networks
# are a union of two classes).
AddressPolicyDependency = NamedDependency[SkipValidation[AddressPolicy]]
LlmWorkDependency = NamedDependency[LlmWork]

# offset + limit within Weaviate's QUERY_MAXIMUM_RESULTS (10,000 by default).
_MAX_OFFSET = 10_000 - 200


def provide_job_store(state: State) -> JobStore:
    """The job store `create_app`'s lifespan opened."""
    store: JobStore = opened_for_jobs(state, "jobs")
    return store


def provide_address_policy(state: State) -> AddressPolicy:
    """The address policy URL ingests are checked against (`SYNOPSIS_FETCH_ALLOW`)."""
    policy: AddressPolicy = opened_for_jobs(state, "address_policy")
    return policy


#: `GET /documents/{source}/summary`: a path that names no source but ends so asks for
#: the summary of the source before it (a source whose own name ends so is shown itself).
SUMMARY_SUFFIX = "/summary"


class DocumentController(Controller):
    """Indexed sources: ingest (as jobs), list, browse, delete.

    Its limits are settings, known when the app is built: `create_app` serves it under a
    `Router` whose body limit is the upload limit, and declares `POST /documents`' body,
    with the crawl and upload limits, among the OpenAPI document's components
    (`document_create_components`).
    """

    path = "/documents"
    security = KEY_REQUIRED
    tags = ("documents",)

    @post(
        operation_id="createDocuments",
        summary="Ingest a URL, inline content or uploaded files, as a job",
        status_code=HTTP_202_ACCEPTED,
        guards=[require_write],
        operation_class=DocumentCreateOperation,
        opt={BODY_TYPES: (JSON, MULTIPART)},
        responses=error_responses(400, 401, 403, 413, 415, 429, 503),
    )
    async def create(
        self,
        request: Request[Any, Any, Any],
        synopsis: SynopsisDependency,
        job_queue: JobQueueDependency,
        address_policy: AddressPolicyDependency,
    ) -> Response[JobView]:
        """202 with the queued job and `Location: /jobs/{id}`; follow it there."""
        owner = caller_id(request)
        # The queue's and the key's limits are checked, and a place taken, before the
        # body is read: a key at its limit costs no upload.
        job_id = await asyncio.to_thread(job_queue.reserve, owner)
        try:
            return await queue_documents(
                request, synopsis.settings, job_queue, address_policy, job_id
            )
        except BaseException:
            await asyncio.to_thread(job_queue.release, job_id)
            raise

    @get(
        operation_id="listDocuments",
        summary="Indexed sources with counts, status and last job",
        guards=[require_read],
        responses=error_responses(401, 503),
    )
    async def list_documents(
        self, synopsis: SynopsisDependency, jobs: JobStoreDependency
    ) -> list[DocumentItem]:
        """Every indexed source, sorted by name."""
        records = await asyncio.to_thread(synopsis.sources)
        last = await asyncio.to_thread(jobs.last_jobs, [record.source for record in records])
        return [DocumentItem.from_record(record, last.get(record.source)) for record in records]

    @get(
        "/{source:path}",
        operation_id="getDocument",
        summary="One source and a page of its chunks with their summaries",
        guards=[require_read],
        # 409 and 429: a path that asks for a document's summary (`get_document_summary`).
        responses=error_responses(400, 401, 404, 409, 429, 503),
    )
    async def get_document(
        self,
        *,
        request: Request[Any, Any, Any],
        synopsis: SynopsisDependency,
        llm_work: LlmWorkDependency,
        jobs: JobStoreDependency,
        source: FromPath[str],
        limit: Annotated[int, Parameter(ge=1, le=200, description="Chunks per page.")] = 50,
        offset: Annotated[
            int,
            Parameter(
                ge=0,
                le=_MAX_OFFSET,
                description=f"Chunks to skip (at most {_MAX_OFFSET}: Weaviate reads at most "
                "10,000 per query).",
            ),
        ] = 0,
        # `getDocumentSummary`'s, which this handler serves (`get_document_summary`).
        style: Annotated[SummaryStyle, Parameter(include_in_schema=False)] = "brief",
    ) -> DocumentDetail | DocumentSummaryView:
        """The source's record and chunks in document order; 404 when it is not indexed.

        Put the source in the path percent-encoded (`/documents/https%3A%2F%2F…`). A path
        that names no source but ends in `/summary` is the whole document's summary
        (`GET /documents/{source}/summary`); a source whose own name ends so is shown itself.
        """
        name = _source_name(request, source)
        record = await asyncio.to_thread(synopsis.source, name)
        if record is None and name.endswith(SUMMARY_SUFFIX):
            return await _document_summary(request, synopsis, llm_work, name, style)
        if record is None:
            raise NotFoundException(detail=f"{name} is not indexed")
        chunks, total = await asyncio.to_thread(
            synopsis.source_chunks, name, limit=limit, offset=offset
        )
        last = await asyncio.to_thread(jobs.last_jobs, [name])
        return DocumentDetail(
            document=DocumentItem.from_record(record, last.get(name)),
            chunks=[ChunkView.from_chunk(chunk) for chunk in chunks],
            total=total,
            limit=limit,
            offset=offset,
        )

    # Litestar hands every GET under /documents/ to `get_document` (a `path` parameter
    # takes the rest of the path, `/summary` included), which serves a summary path with
    # `_document_summary`: this route is the operation's own entry in the OpenAPI document.
    @get(
        "/{source:path}/summary",
        operation_id="getDocumentSummary",
        summary="A summary of the whole document, written by the answer model",
        guards=[require_read],
        responses=error_responses(400, 401, 404, 409, 429, 503),
    )
    async def get_document_summary(
        self,
        *,
        request: Request[Any, Any, Any],
        synopsis: SynopsisDependency,
        llm_work: LlmWorkDependency,
        source: FromPath[str],
        style: Annotated[SummaryStyle, Parameter(description="Its length.")] = "brief",
    ) -> DocumentSummaryView:
        """A summary of the whole document, written from its chunks' summaries by the
        answer model on first request, then cached until the document changes; 404 when
        it is not indexed, 409 while its ingest is still writing summaries. It counts
        against the key's share of model calls, as `POST /ask` (429 past it).

        Put the source in the path percent-encoded, as for `GET /documents/{source}`; a
        source whose own name ends in `/summary` is shown there, not summarized.
        """
        name = _source_name(request, source)
        return await _document_summary(request, synopsis, llm_work, name, style)

    @delete(
        "/{source:path}",
        operation_id="deleteDocument",
        summary="Delete a source's originals and summaries",
        status_code=HTTP_200_OK,
        guards=[require_write],
        responses=error_responses(400, 401, 403, 404, 409, 503),
    )
    async def delete_document(
        self, request: Request[Any, Any, Any], synopsis: SynopsisDependency, source: FromPath[str]
    ) -> DeletedSource:
        """Remove one source; 404 when it is not indexed (percent-encode it, as for GET),
        409 while an ingest of it runs."""
        name = _source_name(request, source)
        originals, summaries = await asyncio.to_thread(synopsis.delete_source, name)
        if originals == summaries == 0:
            raise NotFoundException(detail=f"{name} is not indexed")
        return DeletedSource(source=name, originals=originals, summaries=summaries)


async def _document_summary(
    request: Request[Any, Any, Any],
    synopsis: Synopsis,
    llm_work: LlmWork,
    name: str,
    style: SummaryStyle,
) -> DocumentSummaryView:
    """The summary `GET /documents/{name}` asks for (`name` ends in `/summary`)."""
    summary = await llm_work.run(
        caller_id(request),
        synopsis.document_summary,
        name.removesuffix(SUMMARY_SUFFIX),
        style=style,
    )
    return DocumentSummaryView.from_summary(summary)


def _source_name(request: Request[Any, Any, Any], path_value: str) -> str:
    """The source a `/documents/{source}` request names, exactly as sent.

    Litestar routes on the decoded path with repeated slashes collapsed and the trailing
    one dropped, so the `{source:path}` value has lost the `//` of a URL, the leading `/`
    of a local path and a URL's final `/`. The raw path (ASGI `raw_path`) keeps them: the
    source is what follows `/documents/` there, percent-decoded. Without a raw path the
    value is used (a local path's leading slash then arrives doubled and is kept once).
    """
    raw = request.scope.get("raw_path")
    root = request.scope.get("root_path", "").encode("latin-1")
    if isinstance(raw, bytes):
        # ASGI's raw_path has no query string, but some clients (httpx's test transport)
        # send one; a literal `?` cannot be part of the path.
        raw = raw.split(b"?", 1)[0]
        if root and raw.startswith(root):
            raw = raw[len(root) :]
        prefix = b"/documents/"
        if raw.startswith(prefix) and len(raw) > len(prefix):
            try:
                return unquote_to_bytes(raw[len(prefix) :]).decode("utf-8")
            except UnicodeDecodeError:
                raise ValidationException(
                    detail="the source in the path is not UTF-8 once percent-decoded",
                    extra=[{"key": "source", "message": "not UTF-8", "source": "path"}],
                ) from None
    return path_value[1:] if path_value.startswith("/") else path_value
