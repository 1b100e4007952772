"""What a response's `Content-Type` declares."""

from __future__ import annotations

import httpx
import pytest

from loaders.bodies import content_type


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("text/html; charset=UTF-8", ("text/html", "UTF-8")),
        ('Text/HTML ;Charset="iso-8859-1"', ("text/html", "iso-8859-1")),
        ("text/plain; format=flowed; charset='utf-8'", ("text/plain", "utf-8")),
        ("application/pdf", ("application/pdf", None)),
        ("", ("", None)),
    ],
)
def test_the_media_type_and_charset_a_response_declares(
    header: str, expected: tuple[str, str | None]
) -> None:
    headers = {"content-type": header} if header else {}
    assert content_type(httpx.Response(200, headers=headers)) == expected
