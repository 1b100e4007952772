"""Hostile or broken inputs: each gives a clear LoaderError or a sane result, quickly."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import pytest

from loaders import LoadOptions, load
from loaders import formats as formats_module
from loaders import html as html_module
from loaders.documents import TITLE
from service.errors import LoaderError


def _load_one(path: Path, options: LoadOptions | None = None) -> list[str]:
    return [doc.page_content for doc in load([str(path)], options=options)]


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("image.html", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 100, "binary data, not text"),
        ("empty.html", b"", "empty source: nothing to load"),
        ("blank.md", b"  \n\n\t\n", "empty source: nothing to load"),
        ("nav-only.html", b"<nav><a href='/'>home</a></nav>", "no text in the page's main content"),
        ("script.htm", b"<script>alert(1)</script>", "no text in the page's main content"),
        ("zeros.txt", b"\x00" * 1000, "binary data, not text"),
    ],
)
def test_unusable_files_give_a_loader_error_naming_the_file(
    tmp_path: Path, name: str, data: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(LoaderError) as caught:
        _load_one(path)
    assert str(caught.value) == f"{path}: {message}"
    assert caught.value.source == str(path)


def test_invalid_utf8_is_decoded_with_a_fallback(tmp_path: Path) -> None:
    path = tmp_path / "legacy.html"
    path.write_bytes(b"<html><body><h1>Caf\xe9</h1><p>\xff\xfe broken \xc3</p></body></html>")
    assert _load_one(path) == ["# Café\n\nÿþ broken Ã\n"]


def test_errors_go_to_on_error_and_loading_continues(tmp_path: Path) -> None:
    (tmp_path / "a.html").write_bytes(b"")
    (tmp_path / "b.md").write_text("# B\n", encoding="utf-8")
    (tmp_path / "c.html").write_bytes(b"\x00\x01\x02")
    errors: list[LoaderError] = []
    docs = list(load([str(tmp_path), str(tmp_path / "missing.md")], on_error=errors.append))
    assert [d.metadata[TITLE] for d in docs] == ["B"]
    assert [(Path(e.source).name, str(e).split(": ", 1)[1]) for e in errors] == [
        ("a.html", "empty source: nothing to load"),
        ("c.html", "binary data, not text"),
        ("missing.md", "no such file, directory or URL"),
    ]


def test_unsupported_file_suffix(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    path.write_text("a,b\n", encoding="utf-8")
    with pytest.raises(LoaderError, match=r"unsupported file type"):
        _load_one(path)


def test_file_over_the_size_cap_is_refused_without_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "huge.html"
    with path.open("wb") as sparse:
        sparse.truncate(21_000_007)
    opened: list[str] = []
    real_open = io.open

    def recording_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(os.fspath(file) if isinstance(file, str | os.PathLike) else repr(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(io, "open", recording_open)
    with pytest.raises(LoaderError, match=r"21000007 bytes exceeds the size cap of 20000000 bytes"):
        _load_one(path)
    monkeypatch.undo()
    assert str(path) not in opened


# Seconds of CPU each (a 20 MB page, 50,000 nested tags): with the corpus tests, out of
# the unit tier, like the hostile corpus's cases.
@pytest.mark.corpus
def test_twenty_megabyte_single_line_page_converts(tmp_path: Path) -> None:
    path = tmp_path / "big.html"
    path.write_bytes(b"<html><body><p>" + b"word and more words " * 990_000 + b"</p></body></html>")
    assert path.stat().st_size > 19_800_000
    [markdown] = _load_one(path)
    assert len(markdown) == 19_800_000


def test_page_with_too_many_tags_is_refused_before_it_is_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "tags.html"
    path.write_bytes(b"<p>" + b"<b>x</b>" * 300_000 + b"</p>")
    parsed: list[int] = []
    convert = formats_module.html_to_markdown

    def counted(text: str, **kwargs: Any) -> Any:
        parsed.append(len(text))
        return convert(text, **kwargs)

    monkeypatch.setattr(formats_module, "html_to_markdown", counted)
    with pytest.raises(LoaderError, match=r"about 600002 tags, more than the 500000"):
        _load_one(path)
    assert parsed == []  # counted, not parsed: the cost of a parse is what the cap avoids
    small = tmp_path / "small.html"
    small.write_bytes(b"<p>" + b"<b>x</b>" * 10 + b"</p>")
    assert _load_one(small)
    assert len(parsed) == 1  # the same path parses a page under the cap


@pytest.mark.parametrize("depth", [5_000, pytest.param(50_000, marks=pytest.mark.corpus)])
def test_deeply_nested_html_does_not_crash(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "deep.html"
    body = "<div>" * depth + "<p>deep text</p><pre>  code\n</pre>" + "</div>" * depth
    path.write_text(f"<html><body>{body}</body></html>", encoding="utf-8")
    [markdown] = _load_one(path)
    assert "deep text" in markdown
    assert "```\n  code\n```" in markdown


def test_recursion_error_falls_back_to_flat_text(monkeypatch: pytest.MonkeyPatch) -> None:
    class Exploding:
        def convert_soup(self, soup: object) -> str:
            raise RecursionError

    monkeypatch.setattr(html_module, "_CONVERTER", Exploding())
    page = html_module.html_to_markdown(
        "<main><h2>Head</h2><p>one   two</p><ul><li>item</li></ul>"
        "<div class='highlight-c'><pre>int  x;\n</pre></div><p>after</p></main>"
    )
    assert page.markdown == "## Head\n\none two\n\nitem\n\n```c\nint  x;\n```\n\nafter\n"


def test_a_real_javadoc_page_with_two_nul_bytes_is_loaded(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    real = Path(__file__).parent / "fixtures" / "generators" / "javadoc" / "ObjectUtils.Null.html"
    data = real.read_bytes()
    middle = len(data) // 2
    (tmp_path / "clean").mkdir()
    (tmp_path / "nul").mkdir()
    clean_path = tmp_path / "clean" / real.name
    clean_path.write_bytes(data)
    path = tmp_path / "nul" / real.name
    path.write_bytes(data[:100] + b"\x00" + data[100:middle] + b"\x00" + data[middle:])
    [doc] = load([str(path)])
    [clean] = load([str(clean_path)])
    assert doc.page_content == clean.page_content.replace("/clean/", "/nul/")
    assert f"{path}: dropped 2 stray control character(s)" in caplog.text
