"""Turn the bytes of a text source into `str` without ever raising `UnicodeDecodeError`.

Order of evidence: a byte-order mark, then the charset declared by the transport
(HTTP `Content-Type`) or by the document itself (HTML `<meta charset>`), then strict
UTF-8, and finally cp1252 with replacement characters, which always succeeds.
"""

from __future__ import annotations

import codecs
import re

from splitters.errors import LoaderError

__all__ = ["decode_text", "html_meta_charset", "looks_binary"]

_BOMS: tuple[tuple[bytes, str], ...] = (
    # UTF-32 first: its little-endian BOM starts with UTF-16's.
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# Browsers look for the declaration in the first 1024 bytes; be a little more lenient.
_META_SCAN_BYTES = 4096
_META_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""",
    re.IGNORECASE,
)
# Labels that the WHATWG encoding standard maps to windows-1252.
_WINDOWS_1252_ALIASES = {"iso-8859-1", "iso8859-1", "latin-1", "latin1", "us-ascii", "ascii"}


def _bom(data: bytes) -> tuple[str, int] | None:
    for mark, name in _BOMS:
        if data.startswith(mark):
            return name, len(mark)
    return None


def looks_binary(data: bytes) -> bool:
    """True when `data` is evidently not text: NUL bytes and no UTF-16/32 byte-order mark."""
    if _bom(data) is not None:
        return False
    return b"\x00" in data[:8192]


def html_meta_charset(data: bytes) -> str | None:
    """The charset named by a `<meta>` tag near the start of an HTML document, if any."""
    match = _META_CHARSET.search(data[:_META_SCAN_BYTES])
    return match.group(1).decode("ascii").lower() if match else None


def _codec(label: str | None) -> str | None:
    if not label:
        return None
    label = label.strip().lower()
    if label in _WINDOWS_1252_ALIASES:
        label = "cp1252"
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def decode_text(
    data: bytes, *, source: str, declared: str | None = None, html: bool = False
) -> str:
    """Decode `data` to text; raise `LoaderError` only for evident binary data.

    `declared` is a charset from the transport (e.g. an HTTP header). With `html`, a
    `<meta charset>` declaration is honoured too. A leading BOM wins over both.
    """
    bom = _bom(data)
    if bom is not None:
        bom_codec, size = bom
        return data[size:].decode(bom_codec, errors="replace")
    transport = _codec(declared)
    wide = transport is not None and transport.startswith(("utf-16", "utf-32"))
    if not wide and looks_binary(data):
        raise LoaderError("binary data, not text", source=source)
    candidates: list[str | None] = [transport]
    if html:
        meta = _codec(html_meta_charset(data))
        # A document that could be read to find its <meta> is not UTF-16 (WHATWG rule).
        candidates.append(None if meta and meta.startswith("utf-16") else meta)
    candidates.append("utf-8")
    for codec in candidates:
        if codec is None:
            continue
        try:
            return data.decode(codec)
        except UnicodeDecodeError:
            continue
    return data.decode("cp1252", errors="replace")
