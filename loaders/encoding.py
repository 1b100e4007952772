"""Turn the bytes of a text source into `str` without ever raising `UnicodeDecodeError`.

Order of evidence: a byte-order mark, then the charset declared by the transport
(HTTP `Content-Type`) or by the document itself (HTML `<meta charset>`), then strict
UTF-8, and finally cp1252 with replacement characters, which always succeeds.

"Binary" means binary: data is refused only when control bytes (other than tab, line
breaks and form feed) are a real share of it, or NUL bytes of its head; a real page
with a few stray control characters (a javadoc page with two NULs) is decoded, and
those characters are dropped with a warning that names the source.
"""

from __future__ import annotations

import codecs
import logging
import re

from splitters.base.errors import LoaderError

__all__ = ["decode_text", "html_meta_charset", "looks_binary"]

logger = logging.getLogger(__name__)

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
# C0 control bytes that text does not hold (tab, LF, CR and FF are text), and DEL.
_CONTROL_BYTES = bytes([*range(0x00, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F])
_CONTROL_CHARS = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f]")
#: Data whose control bytes are at least this share of it is binary...
BINARY_CONTROL_SHARE = 0.05
#: ...and so is data whose first `_HEAD_BYTES` are at least this share NUL bytes.
BINARY_HEAD_NUL_SHARE = 0.01
_HEAD_BYTES = 8192
# Labels that the WHATWG encoding standard maps to windows-1252.
_WINDOWS_1252_ALIASES = {"iso-8859-1", "iso8859-1", "latin-1", "latin1", "us-ascii", "ascii"}


def _bom(data: bytes) -> tuple[str, int] | None:
    for mark, name in _BOMS:
        if data.startswith(mark):
            return name, len(mark)
    return None


def looks_binary(data: bytes) -> bool:
    """True when `data` is evidently not text (and has no UTF-16/32 byte-order mark).

    Evidence: control bytes are at least `BINARY_CONTROL_SHARE` of the data, or NUL
    bytes at least `BINARY_HEAD_NUL_SHARE` of its head. One stray NUL is not binary.
    """
    if not data or _bom(data) is not None:
        return False
    head = data[:_HEAD_BYTES]
    if head.count(0) >= BINARY_HEAD_NUL_SHARE * len(head):
        return True
    controls = len(data) - len(data.translate(None, _CONTROL_BYTES))
    return controls >= BINARY_CONTROL_SHARE * len(data)


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
        return _without_controls(data[size:].decode(bom_codec, errors="replace"), source)
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
            return _without_controls(data.decode(codec), source)
        except UnicodeDecodeError:
            continue
    return _without_controls(data.decode("cp1252", errors="replace"), source)


def _without_controls(text: str, source: str) -> str:
    """`text` without stray control characters, with a warning naming `source`."""
    cleaned, count = _CONTROL_CHARS.subn("", text)
    if count:
        logger.warning("%s: dropped %d stray control character(s)", source, count)
    return cleaned
