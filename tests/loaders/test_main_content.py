"""Generic main-content extraction: each rule on a small page, named by what it sees,
never by a theme."""

from __future__ import annotations

import pytest

from loaders.html import html_to_markdown

LINKS = "".join(f'<li><a href="/p{i}.html">Page {i}</a></li>' for i in range(8))
TEXT = "<p>" + "Real documentation text that a reader reads. " * 12 + "</p>"


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        # An id or class hint, when it holds most of the page's own text.
        (f"<body><div id='menu-col'><ul>{LINKS}</ul></div><div id='content'>{TEXT}</div></body>",
         TEXT),
        (f"<body><div class='contents'>{TEXT}</div><div class='contents'><p>x</p></div></body>",
         TEXT),
        # No hint: the child that holds nearly all of the text outside links.
        (f"<body><div><ul>{LINKS}</ul></div><div><h2>T</h2>{TEXT}</div></body>",
         f"<h2>T</h2>{TEXT}"),
    ],
)  # fmt: skip
def test_main_content_without_semantic_elements(html: str, expected: str) -> None:
    want = html_to_markdown(f"<main>{expected}</main>").markdown
    assert html_to_markdown(html).markdown.endswith(want)


def test_a_main_content_without_h1_gets_the_page_title() -> None:
    body = f"<div id='content'><h2>C</h2>{TEXT}</div>"
    html = f"<html><head><title>Cursor Flags</title></head><body>{body}</body></html>"
    assert html_to_markdown(html).markdown.startswith("# Cursor Flags\n\n## C\n\n")


@pytest.mark.parametrize(
    "noise",
    [
        "<div hidden><p>hidden text</p></div>",
        "<div aria-hidden='true'><p>hidden text</p></div>",
        "<div style='display: none'><p>hidden text</p></div>",
        "<section class='content hidden'><p>hidden text</p></section>",
        "<div role='dialog'><p>search the docs</p></div>",
        "<div class='modal fade'><p>search the docs</p></div>",
        "<dialog><p>search the docs</p></dialog>",
        "<svg><text>diagram label</text></svg>",
        "<form class='search'><p>search the docs</p></form>",
        "<nav class='breadcrumbs'><a href='/'>Docs</a></nav>",
        "<div class='breadcrumb'><a href='/'>Docs</a> » Guide</div>",
        "<div class='page-toc'><p>On this page</p></div>",
        "<div role='navigation'><p>menu</p></div>",
        "<div class='rst-footer-buttons'><a href='a.html' rel='prev'>Previous</a></div>",
        "<a href='https://example.org/repo/edit/main/docs/page.md'>Edit on GitHub</a>",
        "<a href='../index.html'><img src='logo.svg' alt='logo'></a>",
        "<a href='https://play.example.org/?code=" + "x" * 400 + "'>Run</a>",
        "<aside><p>Last update: 2024-01-01</p></aside>",
        f"<aside class='sidebar'><ul>{LINKS}</ul></aside>",
        "<ul>" + "".join(f"<li><a href='#{x}'>{x.upper()}</a></li>" for x in "abc") + "</ul>",
    ],
)
def test_noise_inside_the_main_content_is_dropped(noise: str) -> None:
    sections = "<section id='a'><h2>A</h2><p>a</p></section><h2 id='b'>B</h2><h2 id='c'>C</h2>"
    html = f"<main><h1>Title</h1>{noise}{sections}</main>"
    expected = "# Title\n\n## A {#a}\n\na\n\n## B {#b}\n\n## C {#c}\n"
    assert html_to_markdown(html).markdown == expected


@pytest.mark.parametrize(
    "content",
    [
        "<aside class='footnote' role='note'><p>[1] A footnote.</p></aside>",
        "<aside class='topic'><p class='topic-title'>Abstract</p><p>What this is.</p></aside>",
        # Links to the page's own definitions are content, not a table of contents.
        "<ul><li>Set <a href='#f'>f</a> to 0</li>"
        + "".join(f"<li><a href='#{x}'>{x}</a></li>" for x in "gh")
        + "</ul>",
        "<p>Call <a href='#PyIter_Next'>PyIter_Next</a> (<code>c.PyIter_Next</code>).</p>",
        "<dl><dt id='c.PyIter_Next'>PyIter_Next()</dt><dd><p>Return the next item.</p></dd></dl>",
        "<h2><a class='toc-backref' href='#id1'>Why indentation?</a></h2>",
    ],
)
def test_content_that_looks_like_noise_is_kept(content: str) -> None:
    markdown = html_to_markdown(f"<main><h1>T</h1>{content}</main>").markdown
    words = [
        w for w in ("footnote", "Abstract", "Set", "PyIter_Next", "Return", "Why") if w in content
    ]
    assert all(word in markdown for word in words), markdown


def test_nothing_inside_pre_is_removed() -> None:
    html = "<main><pre><span hidden>a</span><span class='nav'>b</span> c</pre></main>"
    assert html_to_markdown(html).markdown == "```\nab c\n```\n"
