"""The MCP tools: what a code assistant may ask of Synopsis, and what it reads back.

Each tool is a thin edge over the core, the same calls the HTTP API makes: `search_docs`
is POST /search with `expand: section` and a token budget (`service.query.context`),
`read_section`/`read_document` read text back from the chunks (`service.query.reading`),
`list_sources` is GET /documents (the indexed documents, not the registered sources of
/sources), and `ask` is POST /ask with the same limits and the same JSON. Their results
are Markdown written for a model to read (the JSON of POST /ask for `ask`). Everything is
read-only.

`ask`'s model call runs where POST /ask's does: on the `LlmWork` executor the tools are
given (the API app's own, inside `synopsis serve`), as a call of the caller the tools are
told (the key the /mcp request presents), so an MCP client shares a key's
`SYNOPSIS_API_LLM_PER_KEY` calls and the app's `SYNOPSIS_API_LLM_WORKERS` slots with
REST, and a slow answer never holds a thread of the default executor that searches and
listings run on. One call past the key's share is a tool error saying so (POST /ask's
429).

Errors are tool errors (`is_error` results the model reads and can correct), never
protocol failures: arguments the JSON schema refuses are named by the SDK's validation,
and a `SynopsisError` keeps the message the REST API gives as `detail` (a limit names
its setting, a missing source says so). Weaviate or Ollama being down is "… is
unavailable; retry later", as in a 503; anything else is the SDK's generic failure,
logged with its traceback.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Annotated, TypeVar

import msgspec
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from service.api.exceptions import dependency_of
from service.api.limits import check_answer_limits, check_search_limits
from service.api.llm_work import LlmWork
from service.api.metrics import record_answer
from service.api.schemas import NOT_ONLY_SPACE, AskRequestBody, AskResponse
from service.errors import SynopsisError
from service.index.records import SourceRecord
from service.index.versions import VERSION_FILTER_PATTERN
from service.query.context import ContextRequest, candidates_for
from service.query.search import search_request
from service.settings import MAX_CONTEXT_TOKENS, MIN_CONTEXT_TOKENS
from service.synopsis import Synopsis

__all__ = ["SynopsisTools"]

T = TypeVar("T")

_NAMES = {"weaviate": "Weaviate", "ollama": "Ollama"}
#: Sources listed by `list_sources` before it asks for a narrower prefix.
_LISTED_SOURCES = 200

Query = Annotated[
    str,
    Field(
        min_length=1,
        pattern=NOT_ONLY_SPACE,
        description="What to look for: a question, a task or an API name, in the words the "
        "documentation would use (at most SYNOPSIS_API_MAX_QUERY_CHARS, 4000, characters).",
    ),
]
Question = Annotated[
    str,
    Field(
        min_length=1,
        pattern=NOT_ONLY_SPACE,
        description="The question, self-contained (at most SYNOPSIS_API_MAX_QUERY_CHARS, "
        "4000, characters).",
    ),
]
Budget = Annotated[
    int | None,
    Field(
        ge=MIN_CONTEXT_TOKENS,
        le=MAX_CONTEXT_TOKENS,
        description="Most tokens (cl100k_base) the result may have; default "
        "SYNOPSIS_SEARCH_MAX_TOKENS, 5000.",
    ),
]
Version = Annotated[
    str | None,
    Field(
        pattern=VERSION_FILTER_PATTERN,
        description="Read only this version of the documentation (its label, e.g. 3.12; "
        "`*`: every version). Default: the latest version of each documentation that has "
        "several, and everything that has none.",
    ),
]
Offset = Annotated[
    int,
    Field(
        ge=0,
        description="Chunk to start from, counted from 0; a page that does not reach the end "
        "says the offset of the next one.",
    ),
]
Source = Annotated[
    str,
    Field(
        min_length=1,
        description="A source exactly as search_docs or list_sources shows it (a path or "
        "URL); a `source#anchor` location also works.",
    ),
]


class SynopsisTools:
    """The tools over the `Synopsis` that `synopsis` returns when called (the app's, or
    the one `synopsis mcp` opened); `ask` runs its model call on `llm_work()` as a call of
    `caller()` (the module docstring)."""

    def __init__(
        self,
        synopsis: Callable[[], Synopsis],
        *,
        llm_work: Callable[[], LlmWork],
        caller: Callable[[], str],
    ) -> None:
        self._synopsis = synopsis
        self._llm_work = llm_work
        self._caller = caller

    async def search_docs(
        self,
        query: Query,
        source_prefix: Annotated[
            str | None,
            Field(
                description="Only sources whose name starts with this, e.g. a site's URL or "
                "a directory (see list_sources)."
            ),
        ] = None,
        max_tokens: Budget = None,
        version: Version = None,
    ) -> str:
        """Search the indexed documentation and read the best matches.

        Returns the sections that best match the query, best first, as Markdown: each
        with its header path, its location (`source#anchor`), a summary, and the whole
        section's original text (code blocks exactly as written). Sections are given
        once and the result stays within `max_tokens`; a section too long for what is
        left comes as its matching part, and the ones left out are listed at the end
        with their size, to read with read_section. Use it before answering questions
        about the documented libraries and tools, and quote the code it returns.
        """
        synopsis = self._synopsis()
        budget = max_tokens or synopsis.settings.search.max_tokens

        async def run() -> str:
            check_search_limits(query, None, synopsis.settings)
            request = search_request(
                synopsis.settings,
                query,
                k=candidates_for(budget),
                source_prefix=source_prefix or None,
                version=version,
            )
            context = ContextRequest(expand="section", max_tokens=budget)
            found = await synopsis.asearch_context(request, context)
            return found.text()

        return await _answering(run())

    async def read_section(
        self,
        source: Source,
        section: Annotated[
            str | None,
            Field(
                description="The section's anchor (as after `#` in its location) or its "
                "header path (`Guide > Install`, or just its last header `Install`); may be "
                "left out when `source` is a `source#anchor` location."
            ),
        ] = None,
        max_tokens: Budget = None,
        offset: Offset = 0,
    ) -> str:
        """Read one section of an indexed document: its original text, subsections
        included, reassembled in order from the stored chunks with its header lines, code
        blocks exactly as written. Text longer than `max_tokens` comes in pages; each
        page ends by naming the `offset` of the next."""
        synopsis = self._synopsis()
        budget = max_tokens or synopsis.settings.search.max_tokens

        def next_page(following: int) -> str:
            return f"More follows: call read_section again with offset={following}."

        reading = await _answering(
            asyncio.to_thread(
                synopsis.read_section,
                source,
                section or "",
                max_tokens=budget,
                offset=offset,
                continuation=next_page,
            )
        )
        return reading.text

    async def read_document(
        self,
        source: Source,
        max_tokens: Budget = None,
        offset: Offset = 0,
    ) -> str:
        """Read a whole indexed document (a page, a file) from its start, or from
        `offset`: the original text reassembled in order from the stored chunks, with
        its header lines, code blocks exactly as written. A document longer than
        `max_tokens` comes in pages; each page ends by naming the `offset` of the next."""
        synopsis = self._synopsis()
        budget = max_tokens or synopsis.settings.search.max_tokens

        def next_page(following: int) -> str:
            return f"More follows: call read_document again with offset={following}."

        reading = await _answering(
            asyncio.to_thread(
                synopsis.read_document,
                source,
                max_tokens=budget,
                offset=offset,
                continuation=next_page,
            )
        )
        return reading.text

    async def list_sources(
        self,
        prefix: Annotated[
            str | None,
            Field(description="Only sources whose name starts with this."),
        ] = None,
    ) -> str:
        """List what is indexed: each source (path or URL) with its title, number of
        chunks, summaries still pending, status, version, and when it was indexed."""
        synopsis = self._synopsis()
        records = await _answering(asyncio.to_thread(synopsis.sources))
        return _sources_text([r for r in records if r.source.startswith(prefix or "")], prefix)

    async def ask(self, question: Question, version: Version = None) -> CallToolResult:
        """Answer a question from the indexed documentation only, with citations.

        Returns the JSON of Synopsis's POST /ask: `answer` (where `[n]` cites
        `citations[n-1]`), `citations` (the passages), and `kind`: `generated` (the
        model's reply, checked against the passages), `extractive` (quoted from the best
        passage because the reply was not supported or the model did not answer), or
        `refusal` ("I don't know": nothing indexed answers it). Prefer search_docs to read
        the sources yourself.
        """
        synopsis = self._synopsis()
        body = AskRequestBody(question=question, version=version)

        async def answer() -> AskResponse:
            check_answer_limits(question, None, synopsis.settings)
            request = body.to_request(synopsis.settings)
            # As POST /ask: the model's executor, the caller's share (or its refusal).
            found = await self._llm_work().run(self._caller(), synopsis.ask, question, request)
            record_answer(found)
            return AskResponse.from_answer(found)

        response = await _answering(answer())
        return CallToolResult(
            content=[TextContent(type="text", text=msgspec.json.encode(response).decode())],
            structured_content=msgspec.to_builtins(response),
        )


async def _answering(work: Awaitable[T]) -> T:
    """`work`'s result, or the tool error a failure stands for (the module docstring)."""
    try:
        return await work
    except SynopsisError as exc:
        raise ToolError(str(exc)) from exc
    except Exception as exc:
        dependency = dependency_of(exc)
        if dependency is None:
            raise
        raise ToolError(f"{_NAMES[dependency]} is unavailable; retry later") from exc


def _sources_text(records: list[SourceRecord], prefix: str | None) -> str:
    scope = f" under {prefix}" if prefix else ""
    if not records:
        return f"Nothing is indexed{scope}."
    lines = [f"# Indexed sources{scope}: {len(records)}", ""]
    for record in records[:_LISTED_SOURCES]:
        pending = f", {record.pending} summaries pending" if record.pending else ""
        when = record.ingested_at.isoformat(timespec="seconds")
        title = f" — {record.title}" if record.title else ""
        version = f"version {record.version}, " if record.version else ""
        lines.append(
            f"- {record.source}{title} ({record.chunks} chunks{pending}; {record.status}, "
            f"{version}indexed {when})"
        )
    if len(records) > _LISTED_SOURCES:
        lines.append(f"- and {len(records) - _LISTED_SOURCES} more: narrow with `prefix`")
    return "\n".join(lines)
