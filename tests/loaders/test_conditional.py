"""Sitemaps and conditional fetches (a loopback server)."""

from __future__ import annotations

import pytest

from loaders import LoaderError, LoadOptions
from loaders.conditional import (
    SitemapEntry,
    fetch_page,
    llms_txt_entries,
    sitemap_entries,
    sitemap_index_entries,
)
from loaders.deadlines import deadline_client
from tests.service.sources.site import Site, page, serve

OPTIONS = LoadOptions(respect_robots=False)


@pytest.mark.parametrize(
    ("xml", "expected"),
    [
        (
            "<urlset><url><loc>https://H.example/a</loc><lastmod>2026-01-01</lastmod></url>"
            "<url> <loc> https://h.example/b?x=1&amp;y=2 </loc> </url></urlset>",
            [
                SitemapEntry("https://h.example/a", "2026-01-01"),
                SitemapEntry("https://h.example/b?x=1&y=2", ""),
            ],
        ),
        (
            "<urlset><url><loc>https://h.example/a</loc></url>"
            "<url><loc>https://h.example/a#top</loc></url></urlset>",
            [SitemapEntry("https://h.example/a", "")],
        ),
    ],
)
def test_sitemap_entries(xml: str, expected: list[SitemapEntry]) -> None:
    assert sitemap_entries(xml.encode(), source="s") == expected


@pytest.mark.parametrize(
    "xml",
    [
        "<sitemapindex><sitemap><loc>https://h/s1.xml</loc></sitemap></sitemapindex>",
        "<html><body>not a sitemap</body></html>",
    ],
)
def test_what_is_not_a_sitemap_is_refused(xml: str) -> None:
    with pytest.raises(LoaderError):
        sitemap_entries(xml.encode(), source="s")


def test_a_sitemap_index_lists_its_sitemaps() -> None:
    xml = (
        "<sitemapindex><sitemap><loc>https://h.example/s1.xml</loc>"
        "<lastmod>2026-01-01</lastmod></sitemap><sitemap> <loc> /s2.xml?a=1&amp;b=2 </loc> "
        "</sitemap><sitemap><loc>https://h.example/s1.xml</loc></sitemap></sitemapindex>"
    )
    assert sitemap_index_entries(xml.encode(), source="https://h.example/sitemap.xml") == [
        SitemapEntry("https://h.example/s1.xml", "2026-01-01"),
        SitemapEntry("https://h.example/s2.xml?a=1&b=2", ""),
    ]
    urlset = "<urlset><url><loc>https://h.example/a</loc></url></urlset>"
    assert sitemap_index_entries(urlset.encode(), source="s") is None
    with pytest.raises(LoaderError, match="lists no"):
        sitemap_index_entries(b"<sitemapindex></sitemapindex>", source="s")


def test_a_page_with_its_etag_is_answered_304_and_a_missing_one_is_gone() -> None:
    site = Site(pages={"/a.html": page("A", "a")}, failing={"/x.html"})
    with serve(site), deadline_client() as client:
        first = fetch_page(client, site.url("/a.html"), options=OPTIONS)
        assert (first.status, first.not_modified, bool(first.etag)) == (200, False, True)
        again = fetch_page(client, site.url("/a.html"), options=OPTIONS, etag=first.etag)
        assert (again.status, again.data) == (304, b"")
        assert fetch_page(client, site.url("/nope.html"), options=OPTIONS).gone
        with pytest.raises(LoaderError, match="HTTP 500"):
            fetch_page(client, site.url("/x.html"), options=OPTIONS)


LLMS_TXT = """# Widgets

> Widgets is a library; see [its home](https://h.example/home.html) (prose: not a page).

Read the [guide](https://h.example/prose.html) first.

## Docs

- [Install](install.md): how to install it
- [Tune](https://h.example/docs/tune.md "Tuning") and [again](install.md#top)
  * [Nested](../api/ref.html)
1. [Numbered](https://h.example/docs/n.md)

```markdown
- [In a fence](https://h.example/fenced.md)
```

## Optional

- [Mail](mailto:team@h.example)
- [Changelog](https://other.example/changes.md)
"""


def test_llms_txt_entries_are_the_links_of_its_lists() -> None:
    assert llms_txt_entries(LLMS_TXT.encode(), source="https://h.example/docs/llms.txt") == [
        SitemapEntry("https://h.example/docs/install.md"),
        SitemapEntry("https://h.example/docs/tune.md"),
        SitemapEntry("https://h.example/api/ref.html"),
        SitemapEntry("https://h.example/docs/n.md"),
        SitemapEntry("https://other.example/changes.md"),
    ]


@pytest.mark.parametrize(
    "text", ["# Widgets\n\n> No links at all.\n", "See [the docs](https://h.example/a).\n"]
)
def test_an_llms_txt_that_lists_no_page_is_refused(text: str) -> None:
    with pytest.raises(LoaderError, match=r"not an llms\.txt index"):
        llms_txt_entries(text.encode(), source="https://h.example/llms.txt")
