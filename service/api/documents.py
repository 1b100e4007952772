"""`/documents`: index sources over HTTP (as jobs), browse and delete what is indexed.

`POST /documents` takes a JSON body (a URL to fetch and optionally crawl, or content
given inline) or a multipart upload of files, stores a `queued` job and answers `202`
with its `Location`; it never waits on the ingest. A URL is checked against the address
policy here (a refusal is a `400` and no connection is made) and again at every redirect
hop and crawled link while the job runs.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Annotated, Any, Literal
from urllib.parse import unquote_to_bytes

import msgspec
from litestar import Controller, Request, Response, delete, get, post
from litestar.datastructures import State, UploadFile
from litestar.di import NamedDependency
from litestar.exceptions import NotFoundException, ValidationException
from litestar.openapi.spec import (
    Components,
    OpenAPIMediaType,
    OpenAPIType,
    Operation,
    Reference,
    RequestBody,
    Schema,
)
from litestar.params import FromPath, Parameter, SkipValidation
from litestar.status_codes import HTTP_200_OK, HTTP_202_ACCEPTED

from loaders.addresses import AddressPolicy
from loaders.documents import HTML, MARKDOWN, TEXT
from loaders.formats import CONTENT_TYPES_BY_SUFFIX
from service.api.bodies import decode_body, invalid_body
from service.api.crosssite import BODY_TYPES, JSON, MULTIPART, UnsupportedMediaType
from service.api.jobs import JobQueueDependency, JobView, accepted, opened_for_jobs
from service.api.limits import check_crawl_limits
from service.api.llm_work import LlmWork
from service.api.openapi import KEY_REQUIRED, error_responses
from service.api.schemas import DeletedSource, SummaryKindField, SummaryModelField
from service.api.security import caller_id, require_read, require_write
from service.errors import InvalidSourceError, RequestLimitError
from service.index.records import SourceChunk, SourceRecord
from service.index.versions import VERSION_PATTERN, check_version
from service.jobs.queue import JobQueue, NewFile
from service.jobs.store import JobStore
from service.query.document_summary import DocumentSummary, SummaryStyle
from service.settings import Settings
from service.synopsis import Synopsis

__all__ = [
    "DocumentController",
    "DocumentCreate",
    "DocumentCreateOperation",
    "document_create_components",
    "provide_address_policy",
    "provide_job_store",
]

SynopsisDependency = NamedDependency[SkipValidation[Synopsis]]
JobStoreDependency = NamedDependency[SkipValidation[JobStore]]
AddressPolicyDependency = NamedDependency[SkipValidation[AddressPolicy]]
LlmWorkDependency = NamedDependency[SkipValidation[LlmWork]]

FORMATS = {"markdown": MARKDOWN, "html": HTML, "text": TEXT}
# offset + limit within Weaviate's QUERY_MAXIMUM_RESULTS (10,000 by default).
_MAX_OFFSET = 10_000 - 200
_MULTIPART = MULTIPART
_JSON = JSON


def provide_job_store(state: State) -> JobStore:
    """The job store `create_app`'s lifespan opened."""
    store: JobStore = opened_for_jobs(state, "jobs")
    return store


def provide_address_policy(state: State) -> AddressPolicy:
    """The address policy URL ingests are checked against (`SYNOPSIS_FETCH_ALLOW`)."""
    policy: AddressPolicy = opened_for_jobs(state, "address_policy")
    return policy


class DocumentCreate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A URL to ingest (`url`, optionally `crawl_depth`, `max_pages`), or inline content
    (`content`, `format`, `source`, optionally `title`). Exactly one of `url`, `content`.
    Either may carry a `version`: the label of every chunk it writes (a multipart upload
    carries it as its text field `version`)."""

    url: Annotated[str, msgspec.Meta(min_length=1, max_length=2048)] | None = None
    crawl_depth: Annotated[int, msgspec.Meta(ge=0)] | None = None
    max_pages: Annotated[int, msgspec.Meta(ge=1)] | None = None
    content: Annotated[str, msgspec.Meta(min_length=1)] | None = None
    format: Literal["markdown", "html", "text"] = "markdown"
    source: Annotated[str, msgspec.Meta(min_length=1, max_length=2048)] | None = None
    title: Annotated[str, msgspec.Meta(max_length=500)] | None = None
    version: Annotated[str, msgspec.Meta(pattern=VERSION_PATTERN)] | None = None


def _nullable(schema: Schema) -> Schema:
    return Schema(one_of=[schema, Schema(type=OpenAPIType.NULL)])


def document_create_components(settings: Settings) -> Components:
    """The request body of `POST /documents`, exactly as `DocumentController.create` accepts
    it, with the configured limits: JSON (a URL, or inline content) or a multipart upload.
    `create_app` adds it to the OpenAPI document's components; the operation refers to it
    (`DocumentCreateOperation`)."""
    common: dict[str, Schema | Reference] = {
        "format": Schema(type=OpenAPIType.STRING, enum=list(FORMATS)),
        "title": _nullable(Schema(type=OpenAPIType.STRING, max_length=500)),
        "version": _nullable(
            Schema(
                type=OpenAPIType.STRING,
                pattern=VERSION_PATTERN,
                description="The version label of every chunk it writes (null: none).",
            )
        ),
    }
    by_url = Schema(
        type=OpenAPIType.OBJECT,
        additional_properties=False,
        required=["url"],
        description="Fetch a URL (and with `crawl_depth`, the same site's pages it links to).",
        properties={
            "url": Schema(type=OpenAPIType.STRING, min_length=1, max_length=2048),
            "crawl_depth": _nullable(
                Schema(
                    type=OpenAPIType.INTEGER, minimum=0, maximum=settings.api_limits.max_crawl_depth
                )
            ),
            "max_pages": _nullable(
                Schema(
                    type=OpenAPIType.INTEGER, minimum=1, maximum=settings.api_limits.max_crawl_pages
                )
            ),
            "content": Schema(type=OpenAPIType.NULL),
            "source": _nullable(Schema(type=OpenAPIType.STRING, min_length=1, max_length=2048)),
            **common,
        },
    )
    inline = Schema(
        type=OpenAPIType.OBJECT,
        additional_properties=False,
        required=["content", "source"],
        description="Index `content` under the name `source`.",
        properties={
            "content": Schema(type=OpenAPIType.STRING, min_length=1),
            "source": Schema(type=OpenAPIType.STRING, min_length=1, max_length=2048),
            "url": Schema(type=OpenAPIType.NULL),
            "crawl_depth": Schema(type=OpenAPIType.NULL),
            "max_pages": Schema(type=OpenAPIType.NULL),
            **common,
        },
    )
    upload = Schema(
        type=OpenAPIType.OBJECT,
        required=["files"],
        properties={
            "files": Schema(
                type=OpenAPIType.ARRAY,
                min_items=1,
                max_items=settings.api_limits.max_upload_files,
                items=Schema(type=OpenAPIType.STRING, format="binary"),  # type: ignore[arg-type]
            ),
            "version": Schema(
                type=OpenAPIType.STRING,
                pattern=VERSION_PATTERN,
                description="The version label of every chunk the files write (absent: none).",
            ),
        },
    )
    body = RequestBody(
        required=True,
        description="A URL or inline content (JSON), or files (multipart, field "
        "`files`: " + ", ".join(sorted(CONTENT_TYPES_BY_SUFFIX)) + ").",
        content={
            _JSON: OpenAPIMediaType(schema=Schema(one_of=[by_url, inline])),
            _MULTIPART: OpenAPIMediaType(schema=upload),
        },
    )
    return Components(request_bodies={_CREATE_BODY: body})


_CREATE_BODY = "DocumentCreate"


@dataclass
class DocumentCreateOperation(Operation):
    """The OpenAPI operation of `POST /documents`: its request body is the app's component
    (`document_create_components`), which carries the configured limits."""

    def __post_init__(self) -> None:
        self.request_body = Reference(f"#/components/requestBodies/{_CREATE_BODY}")


class DocumentItem(msgspec.Struct, kw_only=True):
    """One indexed source: chunk count, status, pending summaries, and its last job."""

    source: str
    title: str
    chunks: int
    status: str
    pending: int
    content_hash: str
    ingested_at: dt.datetime
    # Its version label (null: none), and when its chunks were last written: the same
    # moment as `ingested_at`, under the name every hit and chunk uses.
    version: str | None = None
    indexed_at: dt.datetime
    last_job: str | None = None

    @classmethod
    def from_record(cls, record: SourceRecord, last_job: str | None) -> DocumentItem:
        """The response form of a source record."""
        return cls(
            source=record.source,
            title=record.title,
            chunks=record.chunks,
            status=record.status,
            pending=record.pending,
            content_hash=record.content_hash,
            ingested_at=record.ingested_at,
            version=record.version or None,
            indexed_at=record.ingested_at,
            last_job=last_job,
        )


class ChunkView(msgspec.Struct, kw_only=True):
    """One chunk of a source with its summary (null while pending or filtered out)."""

    id: str
    chunk_index: int
    headers: list[str]
    content: str
    summary: str | None
    summary_kind: SummaryKindField | None = None
    summary_model: SummaryModelField | None = None
    summary_pending: bool
    page_start: int | None = None
    page_end: int | None = None
    anchor: str = ""
    version: str | None = None  # its source's version label (null: none)
    indexed_at: dt.datetime | None = None  # when it was written (null: not kept then)

    @classmethod
    def from_chunk(cls, chunk: SourceChunk) -> ChunkView:
        """The response form of a stored chunk."""
        return cls(
            id=chunk.id,
            chunk_index=chunk.chunk_index,
            headers=list(chunk.headers),
            content=chunk.content,
            summary=chunk.summary,
            summary_pending=chunk.summary_pending,
            summary_kind=chunk.summary_kind,
            summary_model=chunk.summary_model,
            page_start=chunk.page_start,
            page_end=chunk.page_end,
            anchor=chunk.anchor,
            version=chunk.version or None,
            indexed_at=chunk.indexed_at,
        )


class DocumentDetail(msgspec.Struct, kw_only=True):
    """A source and one page of its chunks, in document order."""

    document: DocumentItem
    chunks: list[ChunkView]
    total: int
    limit: int
    offset: int


class DocumentSummaryView(msgspec.Struct, kw_only=True):
    """A whole document's summary (`GET /documents/{source}/summary`): `kind` generated
    (the model's, which passed the grounding check) or extractive (the outline quoted)."""

    source: str
    title: str
    summary: str
    kind: Literal["generated", "extractive"]
    sections: int
    llm_calls: int
    cached: bool
    model: str
    style: Literal["brief", "detailed"]
    support: float | None = None

    @classmethod
    def from_summary(cls, summary: DocumentSummary) -> DocumentSummaryView:
        """The response form of a document summary."""
        return cls(
            source=summary.source,
            title=summary.title,
            summary=summary.text,
            kind=summary.kind,
            sections=summary.sections,
            llm_calls=summary.llm_calls,
            cached=summary.cached,
            model=summary.model,
            style=summary.style,
            support=summary.support,
        )


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
        opt={BODY_TYPES: (_JSON, _MULTIPART)},
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
            return await self._create(request, synopsis, job_queue, address_policy, job_id)
        except BaseException:
            await asyncio.to_thread(job_queue.release, job_id)
            raise

    async def _create(
        self,
        request: Request[Any, Any, Any],
        synopsis: Synopsis,
        job_queue: JobQueue,
        address_policy: AddressPolicy,
        job_id: str,
    ) -> Response[JobView]:
        settings = synopsis.settings
        owner = caller_id(request)
        media_type = request.content_type[0]
        if media_type == _MULTIPART:
            files, version = await _uploaded_files(request, settings)
            job = await asyncio.to_thread(
                job_queue.submit_files, owner, files, job_id=job_id, version=version
            )
            return accepted(job)
        if media_type != _JSON:  # `CrossSiteGuard` refused other types; a body-less request
            raise UnsupportedMediaType(
                detail=f"the body must be {_JSON} or {_MULTIPART}, not {media_type!r}"
            )
        body = _decode(await request.body())
        if (body.url is None) == (body.content is None):
            raise _invalid("url", "give exactly one of `url` and `content`")
        if body.url is not None:
            depth = settings.urls.crawl_depth if body.crawl_depth is None else body.crawl_depth
            pages = settings.urls.max_pages if body.max_pages is None else body.max_pages
            check_crawl_limits(depth, pages, settings)
            await asyncio.to_thread(address_policy.check, body.url)  # UnsafeUrlError: 400
            job = await asyncio.to_thread(
                job_queue.submit_url,
                owner,
                body.url,
                crawl_depth=depth,
                max_pages=pages,
                job_id=job_id,
                version=body.version or "",
            )
            return accepted(job)
        if body.source is None:
            raise _invalid("source", "inline `content` needs a `source` name to index it under")
        if body.crawl_depth is not None or body.max_pages is not None:
            raise _invalid("crawl_depth", "`crawl_depth` and `max_pages` apply to a `url` only")
        assert body.content is not None
        data = body.content.encode("utf-8")
        _size_at_most("content", len(data), settings)
        item = NewFile(
            data=data,
            source=body.source,
            content_type=FORMATS[body.format],
            title=body.title or "",
        )
        job = await asyncio.to_thread(
            job_queue.submit_files, owner, [item], job_id=job_id, version=body.version or ""
        )
        return accepted(job)

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


def _upload_name(filename: str) -> str:
    """The source name of an uploaded file: its relative path as sent, without `..`."""
    parts = PurePosixPath(filename.replace("\\", "/")).parts
    return "/".join(part for part in parts if part not in ("/", ".", ".."))


def _decode(raw: bytes) -> DocumentCreate:
    return decode_body(raw, DocumentCreate, where="POST /documents")


def _invalid(field: str, message: str) -> ValidationException:
    return invalid_body("POST /documents", field, message)


def _size_at_most(field: str, size: int, settings: Settings) -> None:
    limit = settings.api_limits.max_upload_file_bytes
    if size > limit:
        var = Settings.env_names()["api_max_upload_file_bytes"]
        raise RequestLimitError(
            f"{field}: {size} bytes exceeds the limit of {limit} bytes per file ({var})",
            field=field,
            too_large=True,
        )


async def _uploaded_files(
    request: Request[Any, Any, Any], settings: Settings
) -> tuple[list[NewFile], str]:
    """The files of a multipart upload (field `files`), checked against the limits, and
    the version label of their chunks (field `version`; empty: none)."""
    form = await request.form()
    labels = form.getall("version", [])
    if len(labels) > 1 or not all(isinstance(label, str) for label in labels):
        raise _invalid("version", "give at most one `version`, as a text field")
    version = str(labels[0]) if labels else ""
    try:
        check_version(version)
    except InvalidSourceError as error:
        raise _invalid("version", str(error)) from None
    uploads = [value for value in form.getall("files", []) if isinstance(value, UploadFile)]
    if not uploads:
        raise _invalid("files", "a multipart upload needs one or more `files` parts")
    if len(uploads) > settings.api_limits.max_upload_files:
        var = Settings.env_names()["api_max_upload_files"]
        raise RequestLimitError(
            f"{len(uploads)} files exceed the limit of {settings.api_limits.max_upload_files} per "
            f"request ({var})",
            field="files",
        )
    files: list[NewFile] = []
    for index, upload in enumerate(uploads):
        field = f"files[{index}]"
        name = _upload_name(upload.filename or "")
        if not name:
            raise _invalid(field, "every uploaded file needs a file name")
        suffix = PurePosixPath(name).suffix.lower()
        content_type = CONTENT_TYPES_BY_SUFFIX.get(suffix)
        if content_type is None:
            raise _invalid(
                field,
                f"{name}: unsupported file type {suffix or '(none)'!r}; accepted: "
                + ", ".join(sorted(CONTENT_TYPES_BY_SUFFIX)),
            )
        data = await upload.read()
        await upload.close()
        _size_at_most(field, len(data), settings)
        files.append(NewFile(data=data, source=name, content_type=content_type))
    return files, version
