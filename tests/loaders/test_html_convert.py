"""`loaders/html/convert.py`'s converter is markdownify's own but for one search: it
converts every fixture page exactly as markdownify's `MarkdownConverter` does with the
same options.

`_Converter.process_tag` is a copy of markdownify's (1.2, the locked version) that reads
"inside a `<pre>`" from the parent tags it passes down instead of searching the tree; if a
new markdownify changes that method, these pages say the copy is stale.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from markdownify import MarkdownConverter

from loaders import html as html_module
from loaders.html.convert import _CONVERTER

FIXTURES = Path(__file__).parent / "fixtures"
PAGES = sorted(path for path in FIXTURES.rglob("*") if path.suffix in (".html", ".htm"))


@pytest.mark.parametrize("page", PAGES, ids=lambda path: str(path.relative_to(FIXTURES)))
def test_the_converter_writes_what_markdownify_writes(
    page: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    html = page.read_text(encoding="utf-8", errors="replace")
    ours = html_module.html_to_markdown(html)
    monkeypatch.setattr(html_module, "_CONVERTER", MarkdownConverter(**_CONVERTER.options))
    assert html_module.html_to_markdown(html) == ours


def test_there_are_pages_to_compare() -> None:
    assert len(PAGES) >= 18
