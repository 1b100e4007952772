"""`recrawl` reads the pages a crawl reads, in its order, and asks conditionally for the
pages it knows (a loopback server)."""

from __future__ import annotations

from loaders import LoadOptions, load
from loaders.deadlines import deadline_client
from loaders.recrawl import CrawledPage, KnownPage, recrawl
from tests.service.sources.site import Site, page, serve

OPTIONS = LoadOptions(respect_robots=False, drop_repeated_blocks=False, crawl_depth=2)


def _site() -> Site:
    return Site(
        pages={
            "/d/index.html": page(
                "Home",
                '<a href="b.html">b</a> <a href="a.html">a</a> <a href="a.html#x">a again</a> '
                '<a href="/elsewhere/c.html">out of scope</a> <a href="logo.png">logo</a> '
                '<a href="missing.html">missing</a>',
            ),
            "/d/a.html": page("A", '<a href="deep.html">deep</a> <a href="b.html">b</a>'),
            "/d/b.html": page("B", "B links nowhere."),
            "/d/deep.html": page("Deep", "Two levels down."),
            "/elsewhere/c.html": page("C", "Out of scope."),
        }
    )


def _recrawl(
    site: Site, known: dict[str, KnownPage], options: LoadOptions = OPTIONS
) -> tuple[list[CrawledPage], list[str], list[str]]:
    errors: list[str] = []
    gone: list[str] = []
    with deadline_client() as client:
        pages = list(
            recrawl(
                client,
                site.url("/d/index.html"),
                options=options,
                known=known,
                on_error=lambda e: errors.append(str(e)),
                on_gone=gone.append,
            )
        )
    return pages, errors, gone


def test_a_first_recrawl_reads_what_the_crawl_reads_in_its_order() -> None:
    with serve(_site()) as site:
        crawled = list(load([site.url("/d/index.html")], options=OPTIONS, on_error=lambda e: None))
        pages, errors, gone = _recrawl(site, {})
    assert [p.url for p in pages] == [d.metadata["source"] for d in crawled]
    assert [d.page_content for p in pages for d in p.documents] == [d.page_content for d in crawled]
    assert [p.depth for p in pages] == [0, 1, 1, 2]
    assert pages[0].links == (
        site.url("/d/b.html"),
        site.url("/d/a.html"),
        site.url("/d/missing.html"),
    )
    assert (errors, gone) == ([], [site.url("/d/missing.html")])
    assert {p.status for p in pages} == {200}


def test_known_pages_are_asked_conditionally_and_keep_their_links() -> None:
    with serve(_site()) as site:
        first, _, _ = _recrawl(site, {})
        known = {p.url: KnownPage(etag=p.etag, links=p.links) for p in first}
        site.requests.clear()
        again, errors, _ = _recrawl(site, known)
        assert [p.url for p in again] == [p.url for p in first]
        assert [(p.status, p.documents, p.digest) for p in again] == [(304, (), "")] * 4
        assert [p.links for p in again] == [p.links for p in first]
        assert errors == []
        assert sum(site.not_modified.values()) == 4
        # a page known without its links is asked whole: a 304 would leave them unknown
        known[site.url("/d/a.html")] = KnownPage(etag=first[2].etag)
        site.not_modified.clear()
        mixed, _, _ = _recrawl(site, known)
        assert [p.status for p in mixed] == [304, 304, 200, 304]


def test_a_page_that_fails_is_reported_and_the_crawl_goes_on() -> None:
    site = _site()
    site.failing = {"/d/b.html"}
    with serve(site):
        pages, errors, _ = _recrawl(site, {})
    assert [p.url.rsplit("/", 1)[1] for p in pages] == ["index.html", "a.html", "deep.html"]
    assert len(errors) == 1
    assert "HTTP 500" in errors[0]
