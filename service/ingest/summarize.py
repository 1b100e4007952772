"""One summary per chunk, written by the chat model with the chunk's header hierarchy.

The prompt (`service.ingest.prompts`) sends a cleaned view of the chunk (link targets,
images, HTML remnants and extra whitespace removed, code kept) after its header path,
given once as "Topic: A › B"; the stored original is untouched. Calls run concurrently
up to a bound, each with a timeout, retried with backoff on transient errors; a chunk that
keeps failing raises a `ModelError` that names it.

With a guard (`QualityThresholds`), every summary is validated
(`service.ingest.quality`): a flagged one is replaced by an extractive summary (with
`strict_retry`, it is first written once more with a stricter prompt). The result records which
(`SummaryResult.kind`) and why (`SummaryResult.reason`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import httpx
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from service.connections import close_ollama_clients
from service.errors import ConfigurationError, ModelError
from service.ingest.model_usage import ModelUsage
from service.ingest.prompts import PROMPT_VERSION, PROMPTS, prompt_messages
from service.ingest.quality import QualityThresholds, extractive_summary, validate_summary
from service.ingest.retry_rate import RetryRate
from service.ingest.turns import ModelTurns
from splitters.base.markdown_syntax import iter_segments

_log = logging.getLogger(__name__)

__all__ = [
    "CLEANING_VERSION",
    "Summarizer",
    "SummaryRequest",
    "SummaryResult",
    "SummaryTimeoutError",
    "clean_for_prompt",
    "strip_preamble",
]

#: The revision of `clean_for_prompt`, which every prompt version shares. A summary records
#: both (`Summarizer.prompt_version`, e.g. "v2+c2") and both are part of its id, so when the
#: cleaning changes what a model sees, stale summaries are found and replaced.
#: c1: the first cleaning (no suffix); c2: generic types (`Result<String, io::Error>`) and
#: inline code are no longer taken for HTML tags, and footnote links (`[[1]](…)`) lose
#: their targets like other links.
CLEANING_VERSION = "c2"

# Link text may hold one level of brackets: a footnote reference is "[[1]](target)".
_LINK = re.compile(
    r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+\"[^\"]*\")?\)"
)
_AUTOLINK = re.compile(r"<(https?://[^>]+)>")
# HTML elements by name (lower case, as loaders and Markdown writers spell them), so that
# a generic type such as `Result<String, io::Error>`, `Vec<T>` or `Option<T>` stays.
_HTML_ELEMENTS = (
    "a|abbr|article|aside|audio|b|bdi|bdo|big|blockquote|br|button|caption|center|cite|code|"
    "col|colgroup|dd|del|details|dfn|div|dl|dt|em|figcaption|figure|font|footer|form|h[1-6]|"
    "header|hr|i|iframe|img|input|ins|kbd|label|li|link|main|mark|meta|nav|noscript|ol|"
    "option|p|picture|pre|q|s|samp|script|section|select|small|source|span|strike|strong|"
    "style|sub|summary|sup|svg|table|tbody|td|textarea|tfoot|th|thead|time|tr|tt|u|ul|var|"
    "video|wbr"
)
_HTML_TAG = re.compile(rf"</?(?:{_HTML_ELEMENTS})(?=[\s/>])[^<>\n]*>")
_INLINE_CODE = re.compile(r"(`+)[^`].*?\1", re.S)
_PERMALINK = re.compile(r"[¶]")
_BLANK_RUNS = re.compile(r"\n{3,}")
_SPACE_RUNS = re.compile(r"(?<=\S)(?:[ \t]{2,}|\t)")  # inside a line; indentation stays
_TRAILING_SPACE = re.compile(r"[ \t]+$", re.M)
_PREAMBLE = re.compile(
    r"^\s*(?:(?:sure[,!.]?\s*)?here(?:'s| is) (?:a |the )?(?:concise |short |brief )?"
    r"summary[^:\n]*[:.]\s*|summary\s*:\s*|\*\*summary\*\*\s*:?\s*)",
    re.IGNORECASE,
)


def clean_for_prompt(markdown: str) -> str:
    """The chunk as the model should see it: links reduced to their text, code kept.

    Outside fenced code: link and image targets, autolink brackets, HTML tags and
    permalink marks are removed, runs of spaces and tabs become one space, trailing
    spaces go, and runs of blank lines become one. Code blocks stay byte-exact.
    """
    cleaned = []
    for segment in iter_segments(markdown):
        if segment.is_code:  # a fenced code block (CommonMark's rules): keep as is
            cleaned.append(segment.text)
            continue
        cleaned.append(_clean_prose(segment.text))
    return "".join(cleaned).strip()


def _clean_prose(text: str) -> str:
    """`clean_for_prompt` outside fenced code. Links lose their targets first (a link's
    text may be code: "[`for`](…)"); HTML tags and permalink marks go outside inline code."""
    for _ in range(3):  # an image inside a link: "[![alt](a.png)](page.html)"
        text, found = _LINK.subn(lambda m: m.group(1), text)
        if not found:
            break
    text = _AUTOLINK.sub(lambda m: m.group(1), text)
    pieces, position = [], 0
    for code in _INLINE_CODE.finditer(text):
        pieces += [_strip_markup(text[position : code.start()]), code.group(0)]
        position = code.end()
    text = "".join([*pieces, _strip_markup(text[position:])])
    text = _TRAILING_SPACE.sub("", _SPACE_RUNS.sub(" ", text))
    # Collapse blank runs in prose only: code (PEP 8's two blank lines) stays exact.
    return _BLANK_RUNS.sub("\n\n", text)


def _strip_markup(prose: str) -> str:
    return _PERMALINK.sub("", _HTML_TAG.sub("", prose))


_SENTENCE_END = re.compile(r"[.!?][\"')\]]?(?=\s|$)")


def strip_preamble(text: str) -> str:
    """Remove "Here is a summary…:"-style openings and surrounding whitespace."""
    return _PREAMBLE.sub("", text.strip(), count=1).strip()


def drop_unfinished_sentence(text: str) -> str:
    """Cut a reply that the token limit stopped mid-sentence back to its last full sentence.

    Kept whole when no full sentence would remain.
    """
    ends = [match.end() for match in _SENTENCE_END.finditer(text)]
    return text[: ends[-1]].rstrip() if ends else text


class SummaryTimeoutError(ModelError):
    """Every attempt at one summary timed out."""


@dataclass(frozen=True, kw_only=True)
class SummaryRequest:
    """A chunk to summarize: its header path, its Markdown, a label for errors, and its
    document's title (which the guard lets a summary name)."""

    headers: Sequence[str]
    content: str
    label: str  # e.g. "tutorial/controlflow.html § 4.3. The range() Function"
    title: str = ""


@dataclass(frozen=True, kw_only=True)
class SummaryResult:
    """A summary and its provenance.

    `kind` is "llm" or "extractive" (the fallback). `reason` lists, comma-separated, what
    the guard flagged in the first attempt: empty for a summary accepted at once; with
    kind "llm" the stricter retry passed; with kind "extractive" it did not.
    """

    text: str
    kind: str = "llm"
    reason: str = ""


class Summarizer:
    """Writes summaries with a chat model: bounded concurrency, timeout, retries."""

    def __init__(
        self,
        model: BaseChatModel,
        *,
        model_name: str,
        concurrency: int = 2,
        timeout: float = 120.0,
        retries: int = 3,
        backoff: float = 1.0,
        guard: QualityThresholds | None = None,
        prompt_version: str = PROMPT_VERSION,
        slow_seconds: float = 60.0,
        strict_retry: bool = False,
        retry_floor: float = 0.0,
    ) -> None:
        if prompt_version not in PROMPTS:
            raise ConfigurationError(
                f"unknown summary prompt version {prompt_version!r}; known: {', '.join(PROMPTS)}"
            )
        self._model = model
        self.guard = guard
        self.model_name = model_name
        self.prompt_name = prompt_version  # which of PROMPTS
        # What a summary records and its id holds: the prompt and the cleaning revision.
        self.prompt_version = f"{prompt_version}+{CLEANING_VERSION}"
        self._concurrency = concurrency
        self._timeout = timeout
        self._retries = retries
        self._backoff = backoff
        self.calls = 0
        # Calls slower than `slow_seconds` are logged as a warning and counted; the last
        # call's wall time is shown in progress; timeouts counted (extractive fallbacks).
        self.slow_seconds = slow_seconds
        self.slow_calls = 0
        self.timeouts = 0
        self.last_call_seconds = 0.0
        # Ollama's own counts and durations of the calls (`service.ingest.model_usage`).
        self.usage = ModelUsage()
        # What the guard did, for reports: flagged first attempts per reason, retries
        # that passed, extractive fallbacks.
        self.flagged: dict[str, int] = {}
        self.retries_passed = 0
        self.fallbacks = 0
        # Whether a flagged summary is written again with the stricter prompt, and whether
        # each of the last strict retries passed (`service.ingest.retry_rate`).
        self.strict_retry = strict_retry
        self.retry_rate = RetryRate(floor=retry_floor)
        self.retries_skipped = 0
        # The ingest embeds its finished summaries in turns of their own (`pause`d).
        self.turns = ModelTurns()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._loop_lock = threading.Lock()

    def summarize_many(
        self,
        requests: Sequence[SummaryRequest],
        *,
        on_done: Callable[[int, SummaryResult], None] | None = None,
        on_wait: Callable[[], None] | None = None,
        wait_seconds: float = 0.5,
    ) -> list[SummaryResult]:
        """Blocking `asummarize_many`, for synchronous callers such as the ingest pipeline.

        It runs on one event loop that this summarizer keeps for its lifetime: the chat
        model's async HTTP client is bound to the loop it first ran on, so a new loop
        per call (`asyncio.run`) would break the second call.

        `on_wait`, when given, is called about every `wait_seconds` while the summaries
        are being written; whatever it raises (a job's stop) cancels the model calls in
        flight and is raised here, so a caller can stop between two replies of a model
        that hangs.
        """
        future = asyncio.run_coroutine_threadsafe(
            self.asummarize_many(requests, on_done=on_done), self._background_loop()
        )
        while True:
            try:
                return future.result(timeout=wait_seconds)
            except concurrent.futures.TimeoutError:
                if on_wait is None:
                    continue
            try:
                on_wait()
            except BaseException:
                future.cancel()
                raise

    def close(self) -> None:
        """Close the model's HTTP clients and the background event loop, if one was started."""
        with self._loop_lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is not None and loop.is_running():
            # Calls a stopped `summarize_many` left behind (its cancel is only scheduled)
            # end before the loop does: a loop closed with them pending destroys them.
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(_cancel_pending(), loop).result(timeout=10)
        close_ollama_clients(self._model, loop)
        if loop is not None and thread is not None:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=10)
            loop.close()

    def _background_loop(self) -> asyncio.AbstractEventLoop:
        with self._loop_lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=loop.run_forever, name="synopsis-summarizer", daemon=True
                )
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def messages(
        self, request: SummaryRequest, *, strict: bool = False
    ) -> list[SystemMessage | HumanMessage]:
        """The prompt for one chunk: the header path once ("Topic: A › B"), then the chunk.

        The strict variant (the guard's retry) has a sterner system prompt and names the
        identifiers the summary should mention (`service.ingest.prompts`).
        """
        return prompt_messages(
            request.headers,
            clean_for_prompt(request.content),
            prompt_version=self.prompt_name,
            strict=strict,
        )

    async def asummarize_checked(self, request: SummaryRequest) -> SummaryResult:
        """Summarize one chunk under the guard: validate, retry strictly once, fall back.

        Without a guard this is `asummarize` with kind "llm".
        """
        try:
            if self.guard is None:
                return SummaryResult(text=await self.asummarize(request))
            text = await self.asummarize(request, accept_empty=True)
        except SummaryTimeoutError as exc:
            # A slow model server must not fail the whole source: the chunk gets the
            # extractive summary, recorded as such, for `resummarize --kind extractive`.
            _log.warning("%s; stored an extractive summary instead", exc)
            self.fallbacks += 1
            self.timeouts += 1
            view = clean_for_prompt(request.content)
            return SummaryResult(
                text=extractive_summary(view, request.headers), kind="extractive", reason="timeout"
            )
        view = clean_for_prompt(request.content)
        reasons = validate_summary(text, view, request.headers, self.guard, title=request.title)
        if not reasons:
            return SummaryResult(text=text)
        for reason in reasons:
            self.flagged[reason] = self.flagged.get(reason, 0) + 1
        if not self.strict_retry or not self.retry_rate.worth_a_retry():
            self.retries_skipped += 1
            self.fallbacks += 1
            return SummaryResult(
                text=extractive_summary(view, request.headers),
                kind="extractive",
                reason=",".join(reasons),
            )
        retry = await self.asummarize(request, strict=True, accept_empty=True)
        again = validate_summary(retry, view, request.headers, self.guard, title=request.title)
        self.retry_rate.record(passed=not again)
        if not again:
            self.retries_passed += 1
            return SummaryResult(text=retry, reason=",".join(reasons))
        self.fallbacks += 1
        return SummaryResult(
            text=extractive_summary(view, request.headers),
            kind="extractive",
            reason=",".join(dict.fromkeys([*reasons, *again])),
        )

    async def asummarize(
        self, request: SummaryRequest, *, strict: bool = False, accept_empty: bool = False
    ) -> str:
        """Summarize one chunk, retrying transient failures.

        An empty reply counts as transient unless `accept_empty` (the guard judges it).
        """
        last_error: Exception | None = None
        for attempt in range(self._retries + 1):
            if attempt:
                await asyncio.sleep(self._backoff * 2 ** (attempt - 1))
            await self.turns.enter()
            started = time.monotonic()
            try:
                self.calls += 1
                reply = await asyncio.wait_for(
                    self._model.ainvoke(self.messages(request, strict=strict)),
                    timeout=self._timeout,
                )
            except (TimeoutError, httpx.HTTPError, ConnectionError, OSError) as exc:
                self._timed(request, time.monotonic() - started)
                last_error = exc
                continue
            except Exception as exc:  # the ollama client's ResponseError, model not found …
                if _is_transient(exc):
                    last_error = exc
                    continue
                raise ModelError(
                    f"summarizing {request.label} with {self.model_name!r} failed: {exc}"
                ) from exc
            finally:
                self.turns.leave()
            ended = time.monotonic()
            self._timed(request, ended - started)
            self.usage.add(reply.response_metadata, ended_at=ended)
            text = strip_preamble(str(reply.content))
            if reply.response_metadata.get("done_reason") == "length":
                text = drop_unfinished_sentence(text)
            if text or accept_empty:
                return text
            last_error = ValueError("the model returned an empty summary")
        if isinstance(last_error, TimeoutError):
            raise SummaryTimeoutError(
                f"summarizing {request.label} with {self.model_name!r} timed out "
                f"{self._retries + 1} times after {self._timeout:g} s each (the model server "
                "is slow or busy; SYNOPSIS_SUMMARY_TIMEOUT raises the limit)"
            ) from last_error
        raise ModelError(
            f"summarizing {request.label} with {self.model_name!r} failed after "
            f"{self._retries + 1} attempts: {_describe(last_error)}"
        ) from last_error

    def _timed(self, request: SummaryRequest, seconds: float) -> None:
        self.last_call_seconds = seconds
        if seconds > self.slow_seconds:
            self.slow_calls += 1
            _log.warning(
                "summarizing %s with %r took %.0f s (over SYNOPSIS_SUMMARY_SLOW_SECONDS=%g): "
                "the model server is slow or busy",
                request.label,
                self.model_name,
                seconds,
                self.slow_seconds,
            )

    async def asummarize_many(
        self,
        requests: Sequence[SummaryRequest],
        *,
        on_done: Callable[[int, SummaryResult], None] | None = None,
    ) -> list[SummaryResult]:
        """Summarize every request (at most `concurrency` at a time), results in order.

        Each goes through `asummarize_checked`, so the guard applies when configured.
        """
        semaphore = asyncio.Semaphore(self._concurrency)
        results: list[SummaryResult] = [SummaryResult(text="")] * len(requests)

        async def one(index: int) -> None:
            async with semaphore:
                results[index] = await self.asummarize_checked(requests[index])
            if on_done is not None:
                on_done(index, results[index])

        tasks = [asyncio.create_task(one(index)) for index in range(len(requests))]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        return results


async def _cancel_pending() -> None:
    """Cancel every other task of the running loop and wait (briefly) for them to end."""
    tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=5)


def _is_transient(exc: Exception) -> bool:
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status >= 500 or status == 429)


def _describe(exc: Exception | None) -> str:
    if exc is None:
        return "unknown error"
    if isinstance(exc, TimeoutError):
        return "timed out"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
