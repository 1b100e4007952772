"""`MarkdownTokenSplitter`: Markdown → chunks of at most `max_tokens` cl100k_base tokens.

How a text is cut:

* It is parsed into blocks (`splitters.base.blocks`): paragraphs, lists, tables, fenced
  code blocks, header lines. Each block is tokenized once; a chunk's size is
  estimated as the sum of its blocks plus one token per separator, then counted
  exactly once when the chunk is built (and re-cut in the rare case the estimate
  was short).
* Cuts fall only between blocks, chosen by `splitters.packing.pack`: fewest cuts
  through glued pairs, then fewest chunks, then the most even sizes (so 900 tokens
  at a limit of 500 become two chunks of about 450, not 500 + 400).
  Glued pairs: a header line and what follows; a paragraph ending with ``:`` and
  what follows; a code block and the text right after it (`keep_text_after_code`).
* A block larger than the limit on its own is cut at line boundaries. A fenced code
  block so cut becomes pieces that each carry the original opening fence line
  (same fence, same info string) and a closing fence, so every piece is valid
  Markdown. A single line longer than the limit is cut inside the line, after a
  space where there is one in the piece's second half, else at a token boundary; the
  pieces join back without a separator. (A chunk over the limit can then only come
  from an estimate the exact count corrects; `on_oversized` still reports any.)
* An unclosed fence (which runs to the end of the text) is closed in the output
  with a fence of the same character and length.
* Overlap (`overlap_tokens`) repeats *whole blocks*: each chunk after the first
  starts with the last blocks of the previous chunk whose total fits in
  `overlap_tokens`; a block larger than that is never repeated, and no block is ever
  repeated in part. Chunks are packed to `max_tokens - overlap_tokens` so that the
  overlap always fits.

Between blocks of one chunk the source's own separators are kept, so a chunk
without re-fenced pieces is an exact slice of the input. Splitting is
deterministic.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.documents import Document
from langchain_text_splitters import TextSplitter

from splitters.base.blocks import Block, BlockKind, parse_blocks
from splitters.base.errors import SplitterError
from splitters.base.metadata import START_INDEX
from splitters.encoding import cl100k_base, count_tokens
from splitters.headers import trim_blank_lines
from splitters.packing import pack

__all__ = ["Chunk", "MarkdownTokenSplitter"]

# Estimated cost of the blank line that separates two blocks ("\n\n" is one token).
_SEPARATOR_TOKENS = 1

# A line over the limit is read in windows of this many characters per allowed token
# (English runs about four characters to a cl100k_base token).
_LINE_WINDOW_CHARS_PER_TOKEN = 4

# A text longer than this many characters per allowed token is almost surely over the
# limit, so counting it whole first would be wasted work; it goes to the block path.
_WHOLE_COUNT_CHARS_PER_TOKEN = 10


@dataclass(frozen=True, slots=True)
class Chunk:
    """One chunk of a text.

    Attributes:
        content: the chunk's Markdown.
        start: offset in the input of the chunk's first character (for a chunk that
            starts with a re-fenced piece, of the piece's first code line).
        tokens: exact cl100k_base token count of `content`.
        oversized: True when `tokens` exceeds the limit (only if a size estimate fell
            short and could not be re-cut; over-long lines are cut).
    """

    content: str
    start: int
    tokens: int
    oversized: bool = False


@dataclass(frozen=True, slots=True)
class _Unit:
    """A block, or a piece of one, with its estimated size.

    For code, `body_start`/`body_end` delimit the covered code lines in the source
    (equal when there are none) and `opener`/`closer` are the fence lines.
    """

    text: str
    kind: BlockKind
    start: int
    end: int
    tokens: int
    block: int
    first: bool = True
    last: bool = True
    opener: str = ""
    closer: str = ""
    body_start: int = 0
    body_end: int = 0

    @property
    def splittable(self) -> bool:
        """More than one character to cut between (at a newline or inside a line)."""
        if self.kind is BlockKind.CODE:
            return self.body_end - self.body_start > 1
        return len(self.text.strip()) > 1


def _code_text(opener: str, body: str | None, closer: str) -> str:
    return f"{opener}\n{body}\n{closer}" if body is not None else f"{opener}\n{closer}"


class MarkdownTokenSplitter(TextSplitter):
    """Split Markdown into token-bounded, balanced chunks that keep code blocks whole.

    `split_text` returns the chunks as strings; `create_documents` and
    `split_documents` return `Document`s with the input's metadata deep-copied per
    chunk (and ``start_index`` when `add_start_index`). `split_chunks` returns
    `Chunk`s with exact token counts.
    """

    def __init__(
        self,
        *,
        max_tokens: int = 500,
        overlap_tokens: int = 0,
        keep_text_after_code: bool = True,
        add_start_index: bool = False,
        on_oversized: Callable[[Chunk], None] | None = None,
    ) -> None:
        """Create a token splitter.

        Args:
            max_tokens: the most cl100k_base tokens in a chunk.
            overlap_tokens: up to this many tokens of whole blocks from the end of
                the previous chunk start the next one; must be below `max_tokens`.
            keep_text_after_code: prefer keeping the text right after a code block
                in the code block's chunk.
            add_start_index: add ``start_index`` (offset in the input) to metadata.
            on_oversized: called with every chunk over `max_tokens`.

        Raises:
            SplitterError: `max_tokens` is not positive or `overlap_tokens` is
                negative or not below `max_tokens`.
        """
        if max_tokens < 1:
            raise SplitterError(f"max_tokens must be at least 1, got {max_tokens}")
        if not 0 <= overlap_tokens < max_tokens:
            raise SplitterError(
                f"overlap_tokens must be between 0 and max_tokens - 1, got {overlap_tokens}"
            )
        super().__init__(
            chunk_size=max_tokens,
            chunk_overlap=overlap_tokens,
            length_function=count_tokens,
            add_start_index=add_start_index,
            strip_whitespace=False,
        )
        self._max = max_tokens
        self._overlap = overlap_tokens
        self._budget = max_tokens - overlap_tokens
        self._keep_text_after_code = keep_text_after_code
        self._on_oversized = on_oversized
        self._encode = cl100k_base().encode_ordinary

    @property
    def max_tokens(self) -> int:
        """The token limit of a chunk."""
        return self._max

    # -- public API -----------------------------------------------------------

    def split_chunks(self, text: str) -> list[Chunk]:
        """Split `text` into chunks, in order."""
        start, end = trim_blank_lines(text, 0, len(text))
        if start >= end:
            return []
        blocks = parse_blocks(text, start, end)
        if blocks[-1].closed and end - start <= _WHOLE_COUNT_CHARS_PER_TOKEN * self._max:
            # Most sections fit whole: one count, and the chunk is the exact slice.
            tokens = self._count(text[start:end])
            if tokens <= self._max:
                return [Chunk(text[start:end], start, tokens)]
        units: list[_Unit] = []
        for index, block in enumerate(blocks):
            unit = self._block_unit(text, block, index)
            if unit.tokens > self._budget and unit.splittable:
                units.extend(self._split_unit(text, unit, self._budget))
            else:
                units.append(unit)
        groups: list[tuple[list[_Unit], int]] = []
        for group in self._pack(units, self._budget):
            groups.extend(self._verified(text, group, self._budget))
        return [self._chunk(text, groups, i) for i in range(len(groups))]

    def split_text(self, text: str) -> list[str]:
        """Return the chunks of `text` as strings."""
        return [chunk.content for chunk in self.split_chunks(text)]

    def create_documents(
        self, texts: list[str], metadatas: list[dict[Any, Any]] | None = None
    ) -> list[Document]:
        """One `Document` per chunk, metadata deep-copied (``start_index`` if asked)."""
        metadatas_ = metadatas or [{}] * len(texts)
        documents: list[Document] = []
        for text, metadata in zip(texts, metadatas_, strict=True):
            for chunk in self.split_chunks(text):
                chunk_metadata = copy.deepcopy(metadata)
                if self._add_start_index:
                    chunk_metadata[START_INDEX] = chunk.start
                documents.append(Document(page_content=chunk.content, metadata=chunk_metadata))
        return documents

    # -- units ----------------------------------------------------------------

    def _count(self, text: str) -> int:
        return len(self._encode(text))

    def _block_unit(self, text: str, block: Block, index: int) -> _Unit:
        if block.kind is not BlockKind.CODE or block.fence is None:
            content = text[block.start : block.end]
            return _Unit(content, block.kind, block.start, block.end, self._count(content), index)
        newline = text.find("\n", block.start, block.end)
        opener_end = block.end if newline < 0 else newline
        opener = text[block.start : opener_end]
        if block.closed:
            closer_start = text.rfind("\n", block.start, block.end) + 1
            closer = text[closer_start : block.end]
            body_start, body_end = opener_end + 1, closer_start - 1
        else:
            closer = block.fence.marker
            body_start, body_end = opener_end + 1, block.end
        body = text[body_start:body_end] if body_end >= body_start else None
        content = _code_text(opener, body, closer)
        return _Unit(
            content,
            BlockKind.CODE,
            block.start,
            block.end,
            self._count(content),
            index,
            opener=opener,
            closer=closer,
            body_start=body_start,
            body_end=max(body_start, body_end),
        )

    def _split_unit(self, text: str, unit: _Unit, budget: int) -> list[_Unit]:
        """Cut an oversized unit at line boundaries (a line over `budget` inside it, by
        `_cut_line`) into pieces of at most `budget`."""
        is_code = unit.kind is BlockKind.CODE
        span_start, span_end = (
            (unit.body_start, unit.body_end) if is_code else (unit.start, unit.end)
        )
        overhead = self._count(unit.opener) + self._count(unit.closer) + 2 if is_code else 0
        line_budget = max(1, budget - overhead)
        line_starts: list[int] = []
        line_ends: list[int] = []
        sizes: list[int] = []
        offset = span_start
        for line in text[span_start:span_end].split("\n"):
            # A line this long is over the limit for any text worth indexing; cutting a
            # line that was not costs nothing (its pieces join back without a gap).
            too_long = len(line) > line_budget * _WHOLE_COUNT_CHARS_PER_TOKEN
            size = 0 if too_long else self._count(line)
            if not too_long and size <= line_budget:
                line_starts.append(offset)
                line_ends.append(offset + len(line))
                sizes.append(size)
            else:  # a line over the limit alone: cut inside it
                for start, end, tokens in self._cut_line(
                    text, offset, offset + len(line), line_budget
                ):
                    line_starts.append(start)
                    line_ends.append(end)
                    sizes.append(tokens)
            offset += len(line) + 1
        ranges = pack(sizes, line_budget, separator=1)
        pieces: list[_Unit] = []
        for number, (lo, hi) in enumerate(ranges):
            first, last = number == 0, number == len(ranges) - 1
            piece_start, piece_end = line_starts[lo], line_ends[hi - 1]
            tokens = sum(sizes[lo:hi]) + (hi - lo - 1) + overhead
            if is_code:
                content = _code_text(unit.opener, text[piece_start:piece_end], unit.closer)
                pieces.append(
                    _Unit(
                        content,
                        BlockKind.CODE,
                        unit.start if first and unit.first else piece_start,
                        unit.end if last and unit.last else piece_end,
                        tokens,
                        unit.block,
                        first=first and unit.first,
                        last=last and unit.last,
                        opener=unit.opener,
                        closer=unit.closer,
                        body_start=piece_start,
                        body_end=piece_end,
                    )
                )
            else:
                pieces.append(
                    _Unit(
                        text[piece_start:piece_end],
                        unit.kind,
                        piece_start,
                        piece_end,
                        tokens,
                        unit.block,
                        first=first and unit.first,
                        last=last and unit.last,
                    )
                )
        return pieces

    def _cut_line(self, text: str, start: int, end: int, budget: int) -> list[tuple[int, int, int]]:
        """Cut `text[start:end]` (one line) into contiguous pieces of at most `budget`
        tokens, each ending after a space where one is in its second half.

        Returns ``(start, end, tokens)`` per piece. Each window of the line is encoded
        once (a cut piece once more), so a line of millions of characters costs about
        two passes."""
        pieces: list[tuple[int, int, int]] = []
        window = budget * _LINE_WINDOW_CHARS_PER_TOKEN
        position = start
        while position < end:
            stop = min(end, position + window)
            tokens = self._encode(text[position:stop])
            size = len(tokens)
            if size > budget:
                head = cl100k_base().decode_bytes(tokens[:budget]).decode("utf-8", "ignore")
                stop = position + max(1, len(head))
                space = text.rfind(" ", position + (stop - position) // 2, stop)
                if space >= 0:
                    stop = space + 1
                size = self._count(text[position:stop])
            pieces.append((position, stop, size))
            position = stop
        return pieces

    # -- packing --------------------------------------------------------------

    def _glued(self, left: _Unit, right: _Unit) -> bool:
        if not left.last:
            return False
        if left.kind is BlockKind.HEADER:
            return True
        if left.kind is BlockKind.TEXT:
            return left.text.rstrip().endswith(":")
        return self._keep_text_after_code and right.kind is BlockKind.TEXT and right.first

    def _pack(self, units: Sequence[_Unit], budget: int) -> list[list[_Unit]]:
        pairs = list(itertools.pairwise(units))
        glue = [self._glued(left, right) for left, right in pairs]
        hard = [
            left.kind is BlockKind.CODE and left.block == right.block and not left.last
            for left, right in pairs
        ]
        ranges = pack(
            [u.tokens for u in units],
            budget,
            separator=_SEPARATOR_TOKENS,
            glue=glue,
            hard=hard,
        )
        return [list(units[lo:hi]) for lo, hi in ranges]

    def _verified(
        self, text: str, group: list[_Unit], budget: int
    ) -> list[tuple[list[_Unit], int]]:
        """Pair `group` with its exact size, re-cut tighter if that exceeds `budget`."""
        only = group[0]
        if len(group) == 1 and only.first and only.last:
            return [(group, only.tokens)]  # a whole block's count is exact
        size = self._count(_join(text, group))
        if size <= budget:
            return [(group, size)]
        tighter = max(1, budget - (size - budget) - 1)
        if len(group) > 1:
            regrouped = self._pack(group, tighter)
        elif only.splittable:
            regrouped = self._pack(self._split_unit(text, only, tighter), tighter)
        else:
            return [(group, size)]
        if len(regrouped) == 1 and tighter == 1:
            return [(group, size)]
        result: list[tuple[list[_Unit], int]] = []
        for part in regrouped:
            result.extend(self._verified(text, part, budget))
        return result

    def _chunk(self, text: str, groups: list[tuple[list[_Unit], int]], index: int) -> Chunk:
        own, tokens = groups[index]
        group = own
        if self._overlap and index > 0:
            group = self._overlap_units(groups[index - 1][0]) + own
        content = _join(text, group)
        if len(group) > len(own):
            tokens = self._count(content)
        while tokens > self._max and len(group) > len(own):
            group = group[1:]  # an estimate fell short: give up overlap blocks
            content = _join(text, group)
            tokens = self._count(content)
        chunk = Chunk(content, group[0].start, tokens, oversized=tokens > self._max)
        if chunk.oversized and self._on_oversized is not None:
            self._on_oversized(chunk)
        return chunk

    def _overlap_units(self, previous: list[_Unit]) -> list[_Unit]:
        taken: list[_Unit] = []
        total = -_SEPARATOR_TOKENS
        for unit in reversed(previous):
            total += unit.tokens + _SEPARATOR_TOKENS
            if total > self._overlap:
                break
            taken.append(unit)
        taken.reverse()
        return taken


def _join(text: str, units: Sequence[_Unit]) -> str:
    """Join units with the source's own separators (a newline between pieces)."""
    parts = [units[0].text]
    for left, right in itertools.pairwise(units):
        if left.end == right.start:  # pieces of one line: nothing between them
            between = ""
        else:
            gap = text[left.end : right.start] if left.end < right.start else ""
            between = gap if gap.strip(" \t\r\n") == "" and gap else "\n"
        parts.append(between)
        parts.append(right.text)
    return "".join(parts)
