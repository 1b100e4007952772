from __future__ import annotations

from pathlib import Path

import pytest

from loaders import LoadOptions, load
from loaders.documents import CONTENT_HASH, CONTENT_TYPE, HTML, SOURCE, TITLE, content_hash
from loaders.html import html_to_markdown, links

FIXTURES = Path(__file__).parent / "fixtures"
BASE = "https://docs.example.org/guide/"


@pytest.mark.parametrize(
    ("name", "title"),
    [
        ("sphinx_page", "2. Using the Widget API"),
        ("mkdocs_page", "Configuration"),
    ],
)
def test_golden_pages(name: str, title: str) -> None:
    html = (FIXTURES / f"{name}.html").read_text(encoding="utf-8")
    page = html_to_markdown(html, base_url=f"{BASE}{name}.html")
    assert page.markdown == (FIXTURES / f"{name}.md").read_text(encoding="utf-8")
    assert page.title == title


@pytest.mark.parametrize(
    ("name", "absent"),
    [
        ("sphinx_page", ["Navigation", "Table of Contents", "This Page", "Copyright", "¶"]),
        ("mkdocs_page", ["Home", "Edit", "Last update", "Previous: Install", "¶"]),
    ],
)
def test_navigation_and_permalinks_are_dropped(name: str, absent: list[str]) -> None:
    html = (FIXTURES / f"{name}.html").read_text(encoding="utf-8")
    markdown = html_to_markdown(html, base_url=BASE).markdown
    for text in absent:
        assert text not in markdown


def test_file_document_metadata(tmp_path: Path) -> None:
    page = tmp_path / "docs" / "sphinx_page.html"
    page.parent.mkdir()
    page.write_bytes((FIXTURES / "sphinx_page.html").read_bytes())
    [doc] = load([str(page)])
    assert doc.metadata == {
        SOURCE: str(page),
        TITLE: "2. Using the Widget API",
        CONTENT_TYPE: HTML,
        CONTENT_HASH: content_hash(doc.page_content),
    }
    # Relative links of a local file resolve against its file:// URL.
    assert f"({page.parent.parent.as_uri()}/library/widget.html#widget.make)" in doc.page_content


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ('<div class="highlight-python3"><pre>x = 1\n</pre></div>', "```python\nx = 1\n```\n"),
        (
            '<div class="highlight-pycon"><pre>&gt;&gt;&gt; 1\n1\n</pre></div>',
            "```pycon\n>>> 1\n1\n```\n",
        ),
        ('<div class="highlight-none"><pre>plain\n</pre></div>', "```\nplain\n```\n"),
        ('<div class="highlight-default"><pre>x\n</pre></div>', "```python\nx\n```\n"),
        (
            '<pre><code class="language-rust">fn main() {}</code></pre>',
            "```rust\nfn main() {}\n```\n",
        ),
        ('<pre class="lang-go">go x()</pre>', "```go\ngo x()\n```\n"),
        ("<pre>a ```` b</pre>", "`````\na ```` b\n`````\n"),
        ("<pre>\ttab\u00a0nbsp  \n\n\n\nend</pre>", "```\n\ttab\u00a0nbsp  \n\n\n\nend\n```\n"),
        ("<pre>&lt;b&gt; *not* _emphasis_ \\</pre>", "```\n<b> *not* _emphasis_ \\\n```\n"),
    ],
)
def test_code_blocks_are_fenced_byte_exact(html: str, expected: str) -> None:
    assert html_to_markdown(f"<main>{html}</main>").markdown == expected


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        # Inside a list item or a table cell, a block still starts at column 0.
        ("<ul><li><p>Run:</p><pre>  make\n</pre></li></ul>", "- Run:\n\n```\n  make\n```\n"),
        (
            "<table><tr><th>a</th></tr><tr><td><pre>x|y</pre></td></tr></table>",
            "| a |\n| --- |\n\n```\nx|y\n```\n",
        ),
        ("<blockquote><pre>q</pre></blockquote>", "```\nq\n```\n"),
    ],
)
def test_code_blocks_leave_their_container(html: str, expected: str) -> None:
    assert html_to_markdown(f"<main>{html}</main>").markdown == expected


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        # The section's id stays, as a `{#id}` header attribute (the splitter reads it).
        ('<h2>Title<a class="headerlink" href="#t">¶</a></h2>', "## Title {#t}\n"),
        ('<h3 id="x">Deep<a href="#x">#</a></h3>', "### Deep {#x}\n"),
        ('<h2><a href="other.html">Linked</a> header ¶</h2>', "## Linked header\n"),
        ('<h2 id="i">Icon<a class="headerlink" href="#i">\uf0c1</a></h2>', "## Icon {#i}\n"),
        ('<h2 id="z">Zero<a class="hash-link" href="#z">\u200b</a></h2>', "## Zero {#z}\n"),
        ('<h2>Glyph <span class="icon">\U000f0337</span></h2>', "## Glyph\n"),
        ("<h4>Keep <code>code</code></h4>", "#### Keep `code`\n"),
        (
            '<section id="s"><h2>Of its section</h2><p>x</p></section>',
            "## Of its section {#s}\n\nx\n",
        ),
        ('<h2><a id="named"></a>Named</h2>', "## Named {#named}\n"),
        ('<h2 id="two words">Not an id</h2>', "## Not an id\n"),
        ("<table><tr><th><h3 id='t'>In a cell</h3></th></tr></table>", None),
    ],
)
def test_headers_are_atx_without_permalinks(html: str, expected: str | None) -> None:
    if expected is None:  # a heading that is no header line: its anchor is dropped
        assert "\ue002" not in html_to_markdown(f"<main>{html}</main>").markdown
        assert "{#t}" not in html_to_markdown(f"<main>{html}</main>").markdown
        return
    assert html_to_markdown(f"<main>{html}</main>").markdown == expected


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ('<div role="main"><p>in</p></div><article><p>out</p></article>', "in\n"),
        ("<main><p>out</p><article><p>in</p></article></main>", "in\n"),
        ("<main><article><p>one</p></article><article><p>two</p></article></main>", "one\n\ntwo\n"),
        ("<main><p>in</p></main><p>out</p>", "in\n"),
        (
            "<body><header>head</header><nav>nav</nav><div class='sidebar'>side</div>"
            "<aside>aside</aside><p>in</p><footer>foot</footer></body>",
            "in\n",
        ),
    ],
)
def test_main_content_selection(html: str, expected: str) -> None:
    assert html_to_markdown(html).markdown == expected


@pytest.mark.parametrize(
    ("href", "expected"),
    [
        ("../api/x.html#f", "[t](https://h.org/docs/api/x.html#f)"),
        ("#local", "[t](https://h.org/docs/guide/page.html#local)"),
        ("https://other.org/", "[t](https://other.org/)"),
        ("mailto:a@b.org", "[t](mailto:a@b.org)"),
    ],
)
def test_relative_links_become_absolute(href: str, expected: str) -> None:
    html = f'<main><p><a href="{href}">t</a></p></main>'
    page = html_to_markdown(html, base_url="https://h.org/docs/guide/page.html")
    assert page.markdown == expected + "\n"


def test_links_for_crawling() -> None:
    html = (
        '<a href="a.html#x">a</a><a href="#y">self</a><a href="/b/">b</a><a href="mailto:m">m</a>'
    )
    assert links(html, base_url="https://h.org/d/p.html") == [
        "https://h.org/d/a.html",
        "https://h.org/b/",
    ]


@pytest.mark.parametrize(
    "h1",
    [
        # MkDocs' theme: an icon font's private-use glyph in the permalink anchor.
        'Configuration<a class="headerlink" href="#c" title="Permanent link">\uf0c1</a>',
        'Configuration<a class="headerlink" href="#c">¶</a>',  # Sphinx
        '<a class="anchor" href="#c">#</a>Configuration',  # Hugo, anchor first
        'Configuration<a class="hash-link" href="#c" aria-label="Direct link">\u200b</a>',
        'Configuration <span class="md-icon">\ue157</span>',  # a glyph outside any link
    ],
)
def test_title_has_no_permalink_glyph(h1: str) -> None:
    page = html_to_markdown(f"<main><h1 id='c'>{h1}</h1><p>text</p></main>")
    assert page.title == "Configuration"
    assert page.markdown.startswith("# Configuration {#c}\n")


def test_a_title_keeps_a_mark_that_is_not_a_permalink() -> None:
    assert html_to_markdown("<main><h1>Using C#</h1><p>text</p></main>").title == "Using C#"


def test_title_falls_back_to_title_tag_then_file_stem(tmp_path: Path) -> None:
    with_title = tmp_path / "a.html"
    with_title.write_text("<title>From tag</title><p>text</p>", encoding="utf-8")
    bare = tmp_path / "b.html"
    bare.write_text("<p>text</p>", encoding="utf-8")
    assert [d.metadata[TITLE] for d in load([str(tmp_path)])] == ["From tag", "b"]


def test_directory_is_walked_in_sorted_order_skipping_build_artefacts(tmp_path: Path) -> None:
    for relative in ["b.md", "a/z.html", "a/y.txt", "_sources/a.rst.txt", ".git/x.md", "c.py"]:
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("# T\n\nbody\n", encoding="utf-8")
    sources = [d.metadata[SOURCE] for d in load([str(tmp_path)], options=LoadOptions())]
    assert sources == [str(tmp_path / p) for p in ["a/y.txt", "a/z.html", "b.md"]]
