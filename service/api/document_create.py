"""`POST /documents`: what it takes, and how it becomes a job.

A JSON body (a URL to fetch and optionally crawl, or content given inline) or a
multipart upload of files, checked against the limits and queued as one job
(`queue_documents`). A URL is checked against the address policy here (a refusal is a
`400` and no connection is made) and again at every redirect hop and crawled link while
the job runs. The OpenAPI document declares the body, with the configured limits, as a
component (`document_create_components`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Annotated, Any, Literal

import msgspec
from litestar import Request, Response
from litestar.datastructures import UploadFile
from litestar.exceptions import ValidationException
from litestar.openapi.spec import (
    Components,
    OpenAPIMediaType,
    OpenAPIType,
    Operation,
    Reference,
    RequestBody,
    Schema,
)

from loaders.addresses import AddressPolicy
from loaders.documents import HTML, MARKDOWN, TEXT
from loaders.formats import CONTENT_TYPES_BY_SUFFIX
from service.api.bodies import decode_body, invalid_body
from service.api.crosssite import JSON, MULTIPART, UnsupportedMediaType
from service.api.jobs import JobView, accepted
from service.api.limits import check_crawl_limits
from service.api.security import caller_id
from service.errors import InvalidSourceError, RequestLimitError
from service.index.versions import VERSION_PATTERN, check_version
from service.jobs.queue import JobQueue, NewFile
from service.settings import Settings

__all__ = [
    "FORMATS",
    "DocumentCreate",
    "DocumentCreateOperation",
    "document_create_components",
    "queue_documents",
    "uploaded_files",
]

FORMATS = {"markdown": MARKDOWN, "html": HTML, "text": TEXT}
_MULTIPART = MULTIPART
_JSON = JSON
_WHERE = "POST /documents"


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


async def queue_documents(
    request: Request[Any, Any, Any],
    settings: Settings,
    job_queue: JobQueue,
    address_policy: AddressPolicy,
    job_id: str,
) -> Response[JobView]:
    """Read the body of a `POST /documents` request, check it, and queue its job as
    `job_id` (which the caller reserved): the `202` that answers it."""
    owner = caller_id(request)
    media_type = request.content_type[0]
    if media_type == _MULTIPART:
        files, version = await uploaded_files(request, settings)
        job = await asyncio.to_thread(
            job_queue.submit_files, owner, files, job_id=job_id, version=version
        )
        return accepted(job)
    if media_type != _JSON:  # `CrossSiteGuard` refused other types; a body-less request
        raise UnsupportedMediaType(
            detail=f"the body must be {_JSON} or {_MULTIPART}, not {media_type!r}"
        )
    body = decode_body(await request.body(), DocumentCreate, where=_WHERE)
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


def _upload_name(filename: str) -> str:
    """The source name of an uploaded file: its relative path as sent, without `..`."""
    parts = PurePosixPath(filename.replace("\\", "/")).parts
    return "/".join(part for part in parts if part not in ("/", ".", ".."))


def _invalid(field: str, message: str) -> ValidationException:
    return invalid_body(_WHERE, field, message)


def _size_at_most(field: str, size: int, settings: Settings) -> None:
    limit = settings.api_limits.max_upload_file_bytes
    if size > limit:
        var = Settings.env_names()["api_max_upload_file_bytes"]
        raise RequestLimitError(
            f"{field}: {size} bytes exceeds the limit of {limit} bytes per file ({var})",
            field=field,
            too_large=True,
        )


async def uploaded_files(
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
