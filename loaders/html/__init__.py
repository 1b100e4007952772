"""HTML → Markdown: the main content of a documentation page, with code blocks byte-exact.

The main content is found without knowing the generator or its theme:

1. semantic elements first: `[role=main]`, the single `<article>`, `<main>`;
2. else the element whose id or class is a content hint (`content`, `main-content`,
   `document`, `body`, …) and holds at least half of the page's own text (text outside
   links), else `<body>`;
3. from there, while one child holds nearly all of the own text (`_NARROW_SHARE`), that
   child: a column of links beside the text (a site menu) is left behind.

Evident non-content is removed from the page first (scripts, styles, inline SVG
diagrams' text, dialogs and modals, hidden elements), then inside the main content:
`nav`, `footer`, forms, navigation/search/banner ARIA roles, elements whose class or id
words say breadcrumb, table of contents, navigation bar, pager, menu or previous/next,
"edit this page" and previous/next links, logo links (an image and no text), links
whose target carries data (over `_MAX_LINK_CHARS`), page-local tables of contents
(lists of links to the page's own sections), and asides or sidebars that are link lists
or short untitled notes (a footnote, `role=note`, or a titled aside is kept). A main
content without an `<h1>` gets one from the page's `<title>`, so every chunk of the page
has a header path (a semantic main content is left as it is).

Code blocks never pass through markdownify: each `<pre>` is swapped for a placeholder,
the rest is converted, and the placeholder is replaced by a fence around the `<pre>`'s
exact text. The fence is longer than any backtick run in the code and always starts
at column 0, even when the `<pre>` sat in a list item or a table cell, so a fenced
block's content is always the `<pre>` text byte for byte. Nothing inside a `<pre>` is
ever removed.

The steps live in modules by job: `parse` (lxml, then BeautifulSoup), `tree` (reading and
removing tags), `noise` (what is not content), `content` (the main content), `headings`
(anchors, words, the title), `targets` (links), `code` (placeholders and fences) and
`convert` (markdownify, and the flat fallback). Their names keep the leading underscore:
they are this package's own; `HtmlPage`, `html_to_markdown` and `links` are its API.
"""

from __future__ import annotations

from dataclasses import dataclass

from bs4 import Tag

from loaders.html.code import _extract_code, _restore_code
from loaders.html.content import _main_content
from loaders.html.convert import _CONVERTER, _escape_cell_pipes, _flat_markdown
from loaders.html.headings import (
    _add_title_heading,
    _clean_permalinks,
    _mark_anchors,
    _restore_anchors,
    _title,
)
from loaders.html.noise import _drop_noise, _drop_page_noise
from loaders.html.parse import _parse
from loaders.html.targets import _absolutize, links
from loaders.html.tree import _Tags

__all__ = ["HtmlPage", "html_to_markdown", "links"]


@dataclass(frozen=True, slots=True)
class HtmlPage:
    """The Markdown of a page's main content and its title (None when it has none)."""

    markdown: str
    title: str | None


def html_to_markdown(
    html: str, *, base_url: str | None = None, main_content: bool = True
) -> HtmlPage:
    """Convert the main content of an HTML page to Markdown.

    `base_url` resolves relative links and image sources (a `file://` URL for local files).
    With `main_content` off, the whole body is converted (for HTML that is all content,
    such as a Word document's). Pages nested too deeply for a recursive converter are
    flattened to paragraphs and fenced code instead of failing.
    """
    soup = _parse(html)
    hinted = _drop_page_noise(soup)
    if main_content:
        main, semantic = _main_content(soup, hinted)
    else:
        body = soup.find("body")
        main, semantic = (body if isinstance(body, Tag) else soup), True
    title = _title(soup, main)
    if main_content:
        _drop_noise(main, semantic=semantic)
    if not semantic:
        _add_title_heading(main, soup)
    tags = _Tags.of(main)
    for comment in tags.comments:
        comment.extract()
    anchors = _mark_anchors(tags.headings)
    _clean_permalinks(tags.headings)
    _absolutize(tags, base_url)
    codes = _extract_code(tags.pres, soup)
    _escape_cell_pipes(tags.cells)
    try:
        converted = str(_CONVERTER.convert_soup(main))
    except RecursionError:
        converted = _flat_markdown(main)
    markdown = _restore_anchors(_restore_code(converted, codes), anchors)
    return HtmlPage(markdown=markdown + "\n" if markdown else "", title=title)
