"""PDF → Markdown with pymupdf: headers, monospace code in fences, page range and image count.

Headers come from the outline (TOC) when a line matches an entry on its page, otherwise
from font size: sizes clearly above the body text's become H1, H2, H3 in decreasing
order. Lines set entirely in a monospace font become fenced code, with indentation
recovered from their x position. A PDF becomes one Document covering all its pages; a
`<!-- page N -->` line marks where each page starts, and `splitters.chunk_documents`
turns the markers into each chunk's own `page_start` and `page_end`.

Images are counted (`image_count`), never decoded for the text. Captioning them is off
by default: with a `LoadOptions.captioner` (a vision model served by Ollama:
`service.models.captions`), each caption is added as a paragraph `*Image (page N): …*`
where the image sits. A caption that fails is logged and left out, as is an image of
more than `max_bytes` pixels; the page's text is still loaded.

A small PDF can expand hugely (`loaders.pdf_limits`), so it is refused when it has more
than `max_pdf_pages` pages, and pages are read one at a time, each measured before its
text is extracted: its text may be `max_page_chars` characters, and the whole document's
content streams may inflate to `max_pdf_content_bytes` (each form counted as often as it
is drawn), it may draw `max_pdf_operations` things and come to `max_bytes` of text. Of
each page only its lines' text, font size, monospace flag and position are kept until
the header sizes of the whole document are known.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from langchain_core.documents import Document

from loaders.documents import IMAGE_COUNT, PDF, make_document
from loaders.options import LoadOptions
from loaders.pdf_limits import ContentMeter, count_page
from splitters.base.errors import LoaderError, ModelError
from splitters.base.markdown_syntax import fence_block
from splitters.base.metadata import PAGE_END, PAGE_MARKER, PAGE_START, page_marker

__all__ = ["pdf_documents"]

logger = logging.getLogger(__name__)


_MONOSPACE_FLAG = 8  # pymupdf span flag bit
_MONOSPACE_NAMES = re.compile(r"cour|mono|code|consol|menlo|typewriter", re.IGNORECASE)
_MAX_HEADER_LEVELS = 3
_MAX_HEADER_CHARS = 150
_SPACES = re.compile(r"\s+")


class _Span(NamedTuple):
    text: str
    size: float
    mono: bool


class _Line(NamedTuple):
    spans: tuple[_Span, ...]
    x0: float
    new_block: bool


def _is_mono(span: dict[str, Any]) -> bool:
    return bool(span["flags"] & _MONOSPACE_FLAG) or bool(_MONOSPACE_NAMES.search(span["font"]))


def _norm(text: str) -> str:
    return _SPACES.sub(" ", text).strip().lower()


def _lines(page: Any, flags: int) -> list[_Line]:
    """The page's lines with text; pymupdf's text dictionary is dropped as soon as read."""
    content: dict[str, Any] = page.get_text("dict", sort=True, flags=flags)
    lines: list[_Line] = []
    for block in content["blocks"]:
        if block.get("type") != 0:
            continue
        for number, line in enumerate(block["lines"]):
            spans = tuple(
                _Span(span["text"], span["size"], _is_mono(span))
                for span in line["spans"]
                if span["text"]
            )
            if spans and "".join(span.text for span in spans).strip():
                lines.append(_Line(spans, line["bbox"][0], number == 0))
    return lines


def _weigh(lines: list[_Line], weights: Counter[float]) -> None:
    """Add each font size's characters (white space aside) on `lines` to `weights`."""
    for line in lines:
        for span in line.spans:
            weights[round(span.size, 1)] += len(span.text.strip())


def _header_sizes(weights: Counter[float]) -> dict[float, int]:
    """Map font sizes clearly larger than the body text's to header levels 1..3."""
    if not weights:
        return {}
    body = weights.most_common(1)[0][0]
    larger = sorted((size for size in weights if size >= body + 1.5), reverse=True)
    return {size: level + 1 for level, size in enumerate(larger[:_MAX_HEADER_LEVELS])}


def _code_line(line: _Line, left: float) -> str:
    size = line.spans[0].size
    indent = max(0, round((line.x0 - left) / (size * 0.6)))  # monospace advance ≈ 0.6 em
    text = "".join(span.text for span in line.spans).rstrip()
    return " " * indent + text


def _page_markdown(
    lines: list[_Line], toc_titles: dict[str, int], header_sizes: dict[float, int]
) -> list[str]:
    blocks: list[str] = []
    paragraph: list[str] = []
    code: list[_Line] = []

    def flush() -> None:
        if paragraph:
            blocks.append(" ".join(paragraph))
            paragraph.clear()
        if code:
            left = min(line.x0 for line in code)
            blocks.append(fence_block("\n".join(_code_line(line, left) for line in code)))
            code.clear()

    for line in lines:
        text = "".join(span.text for span in line.spans).strip()
        if all(span.mono for span in line.spans):
            if paragraph:
                flush()
            code.append(line)
            continue
        level = toc_titles.get(_norm(text))
        if level is None and len(text) <= _MAX_HEADER_CHARS:
            levels = {header_sizes.get(round(span.size, 1)) for span in line.spans}
            if len(levels) == 1 and None not in levels:
                level = levels.pop()
        if level is not None:
            flush()
            blocks.append("#" * min(level, 6) + " " + _SPACES.sub(" ", text))
            continue
        if code or line.new_block:
            flush()
        paragraph.append(_SPACES.sub(" ", text))
    flush()
    return blocks


def _pymupdf() -> Any:
    # Imported here: pymupdf (and the layout module it loads) costs seconds at start-up,
    # which every command that never reads a PDF would pay. It is only partly annotated;
    # go through an explicitly dynamic handle.
    import pymupdf

    return pymupdf


def _open(data: bytes, source: str) -> Any:
    mupdf = _pymupdf()
    try:
        return mupdf.open(stream=data, filetype="pdf")
    except (mupdf.FileDataError, RuntimeError, ValueError) as exc:
        raise LoaderError(f"not a readable PDF ({exc})", source=source) from exc


def pdf_documents(
    data: bytes,
    *,
    source: str,
    fallback_title: str,
    options: LoadOptions,
) -> Iterator[Document]:
    """Yield the Document of a PDF; `LoaderError` naming `source` if it is encrypted,
    corrupt, or has no extractable text."""
    with _open(data, source) as doc:
        if doc.needs_pass:
            raise LoaderError("encrypted PDF: a password is required", source=source)
        if doc.is_repaired:
            # Truncated or damaged: MuPDF rebuilt the cross-reference table, and pages
            # may be missing. Loading half a manual silently would be worse than refusing.
            raise LoaderError(
                "damaged PDF (truncated or corrupt; pages may be missing)", source=source
            )
        if doc.page_count == 0:
            raise LoaderError("PDF has no pages", source=source)
        if doc.page_count > options.max_pdf_pages:
            raise LoaderError(
                f"{doc.page_count} pages, more than the {options.max_pdf_pages} a PDF may have",
                source=source,
            )
        mupdf = _pymupdf()
        try:
            markdown, images, first_header = _convert(doc, options, source)
        except (RuntimeError, ValueError, mupdf.mupdf.FzErrorBase) as exc:
            raise LoaderError(f"corrupt PDF ({exc})", source=source) from exc
        if not markdown:
            raise LoaderError(
                "PDF has no extractable text (scanned? OCR is not supported)", source=source
            )
        metadata_title = (doc.metadata or {}).get("title") or ""
        yield make_document(
            markdown,
            source=source,
            title=metadata_title.strip() or first_header or fallback_title,
            content_type=PDF,
            **{PAGE_START: 1, PAGE_END: doc.page_count, IMAGE_COUNT: images},
        )


@dataclass
class _Page:
    lines: list[_Line]
    captions: list[str]


#: The outline entries read for headers; a longer outline is read this far (the rest of
#: the headers come from font sizes). An outline is PDF objects a small file can hold
#: millions of, and reading it whole (`get_toc`) holds them all at once.
MAX_OUTLINE_ENTRIES = 20_000
#: An outline title longer than this matches no header line, and is not kept.
MAX_OUTLINE_TITLE_CHARS = 500


def _outline_titles(doc: Any, source: str) -> dict[int, dict[str, int]]:
    """{page number: {normalised title: level}} from the outline, at most
    `MAX_OUTLINE_ENTRIES` entries, read one at a time in document order."""
    mupdf = _pymupdf().mupdf
    titles: dict[int, dict[str, int]] = {}
    read = 0
    try:
        walker = mupdf.FzOutlineIterator(doc.this)
        item = walker.fz_outline_iterator_item()
        level = 1
        while item.valid():
            read += 1
            if read > MAX_OUTLINE_ENTRIES:
                logger.warning(
                    "%s: outline read to its first %d entries only", source, MAX_OUTLINE_ENTRIES
                )
                break
            title, uri = item.title() or "", item.uri() or ""
            if uri.startswith("#") and len(title) <= MAX_OUTLINE_TITLE_CHARS:
                location = mupdf.fz_resolve_link(doc.this, uri)[0]
                page = mupdf.fz_page_number_from_location(doc.this, location) + 1
                if 1 <= page <= doc.page_count:
                    titles.setdefault(page, {})[_norm(title)] = level
            item, level = _next_outline_item(walker, level)
    except (RuntimeError, ValueError, mupdf.FzErrorBase) as exc:
        # A broken outline (a cycle, a bad entry) costs its headers, not the document.
        logger.warning("%s: outline unreadable after %d entries (%s)", source, read, exc)
    return titles


def _next_outline_item(walker: Any, level: int) -> tuple[Any, int]:
    """The entry after the walker's in document order (its first child, else its next
    sibling or an ancestor's), and its level; an invalid item at the end."""
    moved = walker.fz_outline_iterator_down()  # 0: onto a child; 1: onto an empty slot
    if moved == 0:
        return walker.fz_outline_iterator_item(), level + 1
    if moved == 1:
        walker.fz_outline_iterator_up()
    while walker.fz_outline_iterator_next() != 0:
        if level == 1 or walker.fz_outline_iterator_up() != 0:
            return _END_OF_OUTLINE, level
        level -= 1
    return walker.fz_outline_iterator_item(), level


class _EndOfOutline:
    @staticmethod
    def valid() -> bool:
        return False


_END_OF_OUTLINE = _EndOfOutline()


def _convert(doc: Any, options: LoadOptions, source: str) -> tuple[str, int, str | None]:
    titles_by_page = _outline_titles(doc, source)
    pages: list[_Page] = []
    weights: Counter[float] = Counter()
    images = 0
    budget = _Budget(doc, options, source)
    for number in range(1, doc.page_count + 1):
        page = doc.load_page(number - 1)
        lines = budget.read(page, number)
        _weigh(lines, weights)
        page_images = page.get_images(full=True)
        images += len(page_images)
        pages.append(_Page(lines, _captions(doc, page_images, number, options, source)))
        del page
    header_sizes = _header_sizes(weights)
    blocks: list[str] = []
    for number, page in enumerate(pages, start=1):
        blocks.append(page_marker(number))
        blocks.extend(_page_markdown(page.lines, titles_by_page.get(number, {}), header_sizes))
        blocks.extend(page.captions)
    first_header = next((b.lstrip("#").strip() for b in blocks if b.startswith("#")), None)
    if all(PAGE_MARKER.match(block) for block in blocks):
        return "", images, first_header  # no text on any page
    markdown = "\n\n".join(blocks)
    return markdown + "\n", images, first_header


class _Budget:
    """What the pages read so far have cost, against `options`' limits."""

    def __init__(self, doc: Any, options: LoadOptions, source: str) -> None:
        self.options = options
        self.source = source
        self.operations = 0
        self.chars = 0
        mupdf = _pymupdf()
        self.mupdf = mupdf.mupdf
        self.content = ContentMeter(mupdf.mupdf, doc, options.max_pdf_content_bytes)
        # The text only: with images kept, pymupdf decodes every image it meets.
        self.flags = mupdf.TEXTFLAGS_DICT & ~mupdf.TEXT_PRESERVE_IMAGES

    def refuse(self, number: int, reason: str) -> LoaderError:
        return LoaderError(f"page {number}: {reason}", source=self.source)

    def read(self, page: Any, number: int) -> list[_Line]:
        """The lines of `page` (number `number`), once it has been measured."""
        options = self.options
        if self.content.page(page) > options.max_pdf_content_bytes:
            raise self.refuse(
                number,
                f"the document's content passes {options.max_pdf_content_bytes} bytes (its"
                " streams inflated, each form counted as often as it is drawn)",
            )
        count = count_page(
            self.mupdf,
            page,
            max_chars=options.max_page_chars,
            max_operations=options.max_pdf_operations - self.operations,
        )
        self.operations += count.operations
        if count.chars > options.max_page_chars:
            raise self.refuse(
                number, f"more than {options.max_page_chars} characters of text on one page"
            )
        if count.stopped:
            raise self.refuse(
                number,
                f"the document draws more than {options.max_pdf_operations} things (text,"
                " paths, images, clips)",
            )
        lines = _lines(page, self.flags)
        self.chars += sum(len(span.text) for line in lines for span in line.spans)
        if self.chars > options.max_bytes:
            raise self.refuse(
                number, f"the document's text passes the size cap of {options.max_bytes}"
            )
        return lines


def _captions(
    doc: Any, page_images: list[Any], number: int, options: LoadOptions, source: str
) -> list[str]:
    """The captions of a page's images, with a captioner (none without)."""
    if options.captioner is None:
        return []
    captions = []
    for image in page_images:
        xref, width, height = image[0], image[2], image[3]
        if width * height > options.max_bytes:
            # Decoding it for the captioner would take gigabytes.
            logger.warning(
                "%s: page %d: image of %dx%d pixels not captioned (over %d pixels)",
                source, number, width, height, options.max_bytes,
            )  # fmt: skip
            continue
        extracted = doc.extract_image(xref)
        try:
            caption = options.captioner(extracted["image"], extracted["ext"])
        except ModelError as exc:  # a misconfigured model is raised
            logger.warning("%s: page %d: image not captioned: %s", source, number, exc)
            continue
        if caption.strip():
            captions.append(f"*Image (page {number}): {caption.strip()}*")
    return captions
