"""Reading one HTTP response body within a size cap and a deadline.

httpx decodes a `Content-Encoding` a whole network read at a time: 64 KB of gzip can
become 64 MB at once, and with stacked codings (`gzip, gzip`) the second decoder inflates
all of that in one call (2 GiB from 3 KB: 4 GB of memory before any cap is checked). So
the raw bytes are read here and inflated with zlib's `max_length`, never more than one
byte past the cap. Only the codings the loaders ask for (`ACCEPT_ENCODING`) are decoded,
one at most; anything else is refused.

httpx's timeouts bound each network operation, not the whole: a server that sends one
byte a second never trips a read timeout. The deadline is checked after every read, and
the loaders' client ends a read still waiting at the deadline (`loaders.deadlines`).
"""

from __future__ import annotations

import time
import zlib

import httpx

from splitters.base.errors import LoaderError

__all__ = ["ACCEPT_ENCODING", "content_type", "read_body"]

#: The `Accept-Encoding` every loader request sends: the codings `read_body` decodes.
ACCEPT_ENCODING = "gzip, deflate"
_GZIP = frozenset({"gzip", "x-gzip"})


def _decompressor(coding: str, first: bytes) -> zlib._Decompress:
    if coding in _GZIP:
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    # "deflate" is meant to be zlib-wrapped, but some servers send raw deflate.
    wrapped = len(first) >= 2 and first[0] & 0x0F == 8 and int.from_bytes(first[:2]) % 31 == 0
    return zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)


def content_type(response: httpx.Response) -> tuple[str, str | None]:
    """The response's media type (lower case, "" when not declared) and the charset its
    `Content-Type` declares, if any."""
    media_type, _, params = response.headers.get("content-type", "").partition(";")
    charset = None
    for param in params.split(";"):
        key, _, value = param.strip().partition("=")
        if key.lower() == "charset":
            charset = value.strip("\"' ")
    return media_type.strip().lower(), charset


def read_body(
    response: httpx.Response, *, source: str, max_bytes: int, deadline: float, seconds: float
) -> bytes:
    """The decoded body of a streamed `response`; `LoaderError` naming `source` when it is
    over `max_bytes` (decoded), still arriving at `deadline` (a `time.monotonic()` value,
    `seconds` after the fetch began), or in a `Content-Encoding` other than one of
    `ACCEPT_ENCODING`."""
    header = response.headers.get("content-encoding", "")
    codings = [c for c in (part.strip().lower() for part in header.split(",")) if c]
    codings = [c for c in codings if c != "identity"]
    if len(codings) > 1 or (codings and codings[0] not in (*_GZIP, "deflate")):
        raise LoaderError(f"unsupported Content-Encoding {header!r}", source=source)
    coding = codings[0] if codings else None
    decompressor: zlib._Decompress | None = None
    body = bytearray()

    def still_arriving() -> LoaderError:
        return LoaderError(
            f"response still arriving after {seconds:g} s (the fetch deadline;"
            f" {len(body)} bytes read)",
            source=source,
        )

    try:
        for raw in response.iter_raw():
            if coding is None:
                body += raw
            else:
                if decompressor is None:
                    decompressor = _decompressor(coding, raw)
                data = raw
                try:
                    while data and not decompressor.eof and len(body) <= max_bytes:
                        body += decompressor.decompress(data, max_bytes - len(body) + 1)
                        data = decompressor.unconsumed_tail
                except zlib.error as exc:
                    raise LoaderError(f"corrupt {coding} body ({exc})", source=source) from exc
            if len(body) > max_bytes:
                raise LoaderError(
                    f"response exceeds the size cap of {max_bytes} bytes"
                    + (f" (inflated from {coding})" if coding else ""),
                    source=source,
                )
            if time.monotonic() > deadline:
                raise still_arriving()
    except httpx.TimeoutException:
        if time.monotonic() < deadline:
            raise
        raise still_arriving() from None
    return bytes(body)
