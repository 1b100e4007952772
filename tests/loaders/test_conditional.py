"""Sitemaps and conditional fetches (a loopback server)."""

from __future__ import annotations

import pytest

from loaders import LoaderError, LoadOptions
from loaders.conditional import SitemapEntry, fetch_page, sitemap_entries
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
