"""PDF → Markdown with pymupdf: headers, monospace code in fences, page range and image count.

Headers come from the outline (TOC) when a line matches an entry on its page, otherwise
from font size: sizes clearly above the body text's become H1, H2, H3 in decreasing
order. Lines set entirely in a monospace font become fenced code, with indentation
recovered from their x position. A PDF becomes one Document covering all its pages; a
`<!-- page N -->` line marks where each page starts, and `splitters.chunk_documents`
turns the markers into each chunk's own `page_start` and `page_end`.

Images are counted (`image_count`). Captioning them is off by default: with a
`LoadOptions.captioner` (a vision model served by Ollama: `service.models.captions`), each
caption is added as a paragraph `*Image (page N): …*` where the image sits. A caption
that fails is logged and left out; the page's text is still loaded.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

from langchain_core.documents import Document

from loaders.documents import (
    IMAGE_COUNT,
    PAGE_END,
    PAGE_MARKER,
    PAGE_START,
    PDF,
    make_document,
    page_marker,
)
from loaders.options import LoadOptions
from splitters.errors import LoaderError, ModelError
from splitters.markdown_syntax import fence_block

__all__ = ["pdf_documents"]

logger = logging.getLogger(__name__)


_MONOSPACE_FLAG = 8  # pymupdf span flag bit
_MONOSPACE_NAMES = re.compile(r"cour|mono|code|consol|menlo|typewriter", re.IGNORECASE)
_MAX_HEADER_LEVELS = 3
_MAX_HEADER_CHARS = 150
_SPACES = re.compile(r"\s+")


def _is_mono(span: dict[str, Any]) -> bool:
    return bool(span["flags"] & _MONOSPACE_FLAG) or bool(_MONOSPACE_NAMES.search(span["font"]))


def _norm(text: str) -> str:
    return _SPACES.sub(" ", text).strip().lower()


def _lines(page: Any) -> list[dict[str, Any]]:
    content: dict[str, Any] = page.get_text("dict", sort=True)
    lines: list[dict[str, Any]] = []
    for block in content["blocks"]:
        if block.get("type") != 0:
            continue
        for number, line in enumerate(block["lines"]):
            spans = [span for span in line["spans"] if span["text"]]
            if spans and "".join(s["text"] for s in spans).strip():
                lines.append({"spans": spans, "x0": line["bbox"][0], "new_block": number == 0})
    return lines


def _header_sizes(all_lines: list[list[dict[str, Any]]]) -> dict[float, int]:
    """Map font sizes clearly larger than the body text's to header levels 1..3."""
    weights: Counter[float] = Counter()
    for lines in all_lines:
        for line in lines:
            for span in line["spans"]:
                weights[round(span["size"], 1)] += len(span["text"].strip())
    if not weights:
        return {}
    body = weights.most_common(1)[0][0]
    larger = sorted((size for size in weights if size >= body + 1.5), reverse=True)
    return {size: level + 1 for level, size in enumerate(larger[:_MAX_HEADER_LEVELS])}


def _code_line(line: dict[str, Any], left: float) -> str:
    size = float(line["spans"][0]["size"])
    x0 = float(line["x0"])
    indent = max(0, round((x0 - left) / (size * 0.6)))  # monospace advance ≈ 0.6 em
    text = "".join(str(span["text"]) for span in line["spans"]).rstrip()
    return " " * indent + text


def _page_markdown(
    lines: list[dict[str, Any]], toc_titles: dict[str, int], header_sizes: dict[float, int]
) -> list[str]:
    blocks: list[str] = []
    paragraph: list[str] = []
    code: list[dict[str, Any]] = []

    def flush() -> None:
        if paragraph:
            blocks.append(" ".join(paragraph))
            paragraph.clear()
        if code:
            left = min(line["x0"] for line in code)
            blocks.append(fence_block("\n".join(_code_line(line, left) for line in code)))
            code.clear()

    for line in lines:
        text = "".join(span["text"] for span in line["spans"]).strip()
        if all(_is_mono(span) for span in line["spans"]):
            if paragraph:
                flush()
            code.append(line)
            continue
        level = toc_titles.get(_norm(text))
        if level is None and len(text) <= _MAX_HEADER_CHARS:
            sizes = {round(span["size"], 1) for span in line["spans"]}
            levels = {header_sizes.get(size) for size in sizes}
            if len(levels) == 1 and None not in levels:
                level = levels.pop()
        if level is not None:
            flush()
            blocks.append("#" * min(level, 6) + " " + _SPACES.sub(" ", text))
            continue
        if code or line["new_block"]:
            flush()
        paragraph.append(_SPACES.sub(" ", text))
    flush()
    return blocks


def _open(data: bytes, source: str) -> Any:
    # Imported here: pymupdf (and the layout module it loads) costs seconds at start-up,
    # which every command that never reads a PDF would pay.
    import pymupdf

    # pymupdf is only partly annotated; go through an explicitly dynamic handle.
    mupdf: Any = pymupdf
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
        try:
            markdown, images, first_header = _convert(doc, options, source)
        except (RuntimeError, ValueError) as exc:
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


def _convert(doc: Any, options: LoadOptions, source: str) -> tuple[str, int, str | None]:
    toc: list[list[Any]] = doc.get_toc(simple=True)
    titles_by_page: dict[int, dict[str, int]] = {}
    for level, title, page_number in toc:
        titles_by_page.setdefault(page_number, {})[_norm(title)] = level
    pages = list(doc)
    all_lines = [_lines(page) for page in pages]
    header_sizes = _header_sizes(all_lines)
    blocks: list[str] = []
    images = 0
    for number, (page, lines) in enumerate(zip(pages, all_lines, strict=True), start=1):
        blocks.append(page_marker(number))
        blocks.extend(_page_markdown(lines, titles_by_page.get(number, {}), header_sizes))
        page_images = page.get_images(full=True)
        images += len(page_images)
        if options.captioner is not None:
            for image in page_images:
                extracted = doc.extract_image(image[0])
                try:
                    caption = options.captioner(extracted["image"], extracted["ext"])
                except ModelError as exc:  # a misconfigured model is raised
                    logger.warning("%s: page %d: image not captioned: %s", source, number, exc)
                    continue
                if caption.strip():
                    blocks.append(f"*Image (page {number}): {caption.strip()}*")
    first_header = next((b.lstrip("#").strip() for b in blocks if b.startswith("#")), None)
    if all(PAGE_MARKER.match(block) for block in blocks):
        return "", images, first_header  # no text on any page
    markdown = "\n\n".join(blocks)
    return markdown + "\n", images, first_header
