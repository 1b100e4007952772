from __future__ import annotations

import pytest

from loaders.encoding import decode_text, html_meta_charset, looks_binary
from service.errors import LoaderError


@pytest.mark.parametrize(
    ("data", "declared", "html", "expected"),
    [
        ("café".encode(), None, False, "café"),
        (b"\xef\xbb\xbfcaf\xc3\xa9", None, False, "café"),
        ("café".encode("utf-16"), None, False, "café"),
        ("café".encode("utf-16-le"), "utf-16le", False, "café"),
        ("café".encode("utf-32"), None, False, "café"),
        (b"caf\xe9", None, False, "café"),  # not UTF-8: cp1252
        (b"\x93quoted\x94", None, False, "“quoted”"),
        (b"bad \x81 byte \xff", None, False, "bad \ufffd byte ÿ"),
        (
            b'<meta charset="koi8-r"><p>\xf0\xd2\xc9\xd7\xc5\xd4',
            None,
            True,
            '<meta charset="koi8-r"><p>Привет',
        ),
        (
            b'<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">\x80',
            None,
            True,
            '<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">€',
        ),
        (b'<meta charset="utf-16"><p>ok', None, True, '<meta charset="utf-16"><p>ok'),
        (
            b'<meta charset="no-such-codec"><p>\xc3\xa9',
            None,
            True,
            '<meta charset="no-such-codec"><p>é',
        ),
        (b"\xe9t\xe9", "latin-1", False, "été"),
        (b"\xc3\xa9", "bogus", False, "é"),
        (b"\xe9", "utf-8", False, "é"),  # a wrong declaration falls through to cp1252
    ],
)
def test_decode_text(data: bytes, declared: str | None, html: bool, expected: str) -> None:
    assert decode_text(data, source="s", declared=declared, html=html) == expected


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"<meta charset=UTF-8>", "utf-8"),
        (
            b"<META CONTENT='text/html; charset=windows-1252' http-equiv=content-type>",
            "windows-1252",
        ),
        (b"<p>no declaration</p>", None),
    ],
)
def test_html_meta_charset(data: bytes, expected: str | None) -> None:
    assert html_meta_charset(data) == expected


def test_binary_data_is_a_loader_error() -> None:
    assert looks_binary(b"\x89PNG\r\n\x1a\n\x00\x00")
    with pytest.raises(LoaderError, match=r"^img\.html: binary data, not text$"):
        decode_text(b"\x89PNG\r\n\x1a\n\x00\x00", source="img.html", html=True)


@pytest.mark.parametrize(
    ("data", "binary"),
    [
        (b"<p>" + b"a page with one stray NUL " * 80 + b"\x00</p>", False),
        (b"<p>text</p>\x01\x02\x1b" + b"<p>more text</p>" * 20, False),
        (b"\x00" * 100 + b"<p>text</p>" * 100, True),  # a NUL-heavy head
        (bytes(range(256)) * 20, True),  # control bytes are a real share
        (b"", False),
    ],
)
def test_binary_is_decided_by_the_share_of_control_bytes(data: bytes, binary: bool) -> None:
    assert looks_binary(data) is binary


def test_stray_control_characters_are_dropped_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    text = decode_text(b"a\x00b\x1bc\td\x0ce\r\nf" + b" text" * 100, source="page.html")
    assert text == "abc\td\x0ce\r\nf" + " text" * 100
    assert "page.html: dropped 2 stray control character(s)" in caplog.text
