"""What a PDF's pages may cost, measured before their text is extracted.

MuPDF interprets a page's content streams as it reads them, inflating as it goes, and
its text device keeps every character it is given: a page whose content stream inflates
to gigabytes of text operators, or a 2 KB page drawing a form that draws a form … seven
levels of ten deep (ten million sentences), took a process to gigabytes. Operators that
draw nothing cost time alone, and while it interprets MuPDF holds the GIL: every other
thread of the process waits.

So each page is measured first, keeping nothing but counts. `ContentMeter` adds up what
interpreting it reads: its content streams inflated, read 1 MiB at a time and kept
nowhere (stopping within a chunk past what is left of the document's budget), and the
content of each form it draws as many times as it is drawn (`/Name Do` for the names of
its forms, counted in the content, through forms drawing forms), plus a charge for each
drawing of a form. `count_page` then runs the page through a
device that only counts the characters of text and the things drawn (text, paths,
images, shadings, clips, groups, tiles) and stops MuPDF (its cookie's abort flag) the
moment the page's characters or the document's operations pass their limits.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["ContentMeter", "PageCount", "count_page"]

#: Device calls that draw (or clip) something: each counts as one operation.
_DRAWING = (
    "fill_path", "stroke_path", "clip_path", "clip_stroke_path", "fill_shade", "fill_image",
    "fill_image_mask", "clip_image_mask", "pop_clip", "begin_mask", "begin_group",
)  # fmt: skip
#: Device calls that carry text: an operation, and their characters are counted.
_TEXT = ("fill_text", "stroke_text", "clip_text", "clip_stroke_text", "ignore_text")
#: A character of a name or an operator (anything but white space and delimiters).
_NAME_CHAR = rb"[^\s/<>\[\]()%{}]"
#: The end of a chunk that may be the start of `/Name Do` (`/Name`, white space, `D`…).
_UNFINISHED = re.compile(rb"(/%b*)(\s*)((?:Do?)?)" % _NAME_CHAR)
#: How much of a stream is read at a time.
_CHUNK = 1 << 20
_ESCAPE = re.compile(rb"#([0-9A-Fa-f]{2})")
#: What drawing a form costs beyond its content, in bytes of content: a form that draws
#: nothing, drawn ten billion times through nested forms, must not pass as free.
FORM_DRAW_BYTES = 100


@dataclass(frozen=True)
class PageCount:
    """What running one page drew: characters of text and operations, up to where it was
    stopped (`stopped`: a limit was passed; the counts are then just past it)."""

    chars: int
    operations: int
    stopped: bool


class ContentMeter:
    """The bytes of content a document's pages make MuPDF read, against a budget.

    `page` adds one page's and returns the document's total so far; once it passes
    `budget`, the total is only known to be past it. Streams are read a chunk at a time
    and nothing of them is kept: only the forms a content draws are counted, so a stream
    of a hundred megabytes costs a chunk of memory. Forms are measured once each and
    remembered for the pages after."""

    def __init__(self, mupdf: Any, doc: Any, budget: int) -> None:
        self.mupdf = mupdf
        self.pdf = mupdf.pdf_document_from_fz_document(doc.this)
        self.budget = budget
        self.total = 0
        self._forms: dict[int, int] = {}
        self._buffer = bytearray(_CHUNK)
        self._data = mupdf.python_mutable_buffer_data(self._buffer)

    def page(self, page: Any) -> int:
        """The document's content bytes with `page`'s added (past the budget: stopped)."""
        resources: dict[int, dict[str, int]] = {}
        for xref, name, invoker, _ in page.get_xobjects():
            resources.setdefault(invoker, {})[name] = xref
        left = self.budget - self.total
        self.total += self._content(page.get_contents(), resources, 0, frozenset(), left)
        return self.total

    def _content(
        self,
        xrefs: list[int],
        resources: dict[int, dict[str, int]],
        owner: int,
        drawing: frozenset[int],
        left: int,
    ) -> int:
        """The bytes of streams `xrefs` and of the forms they draw, each as often as
        drawn; stops once past `left`. `owner` is the form whose content it is (0: the
        page); `drawing`, the forms being drawn around it."""
        names = resources.get(owner) or resources.get(0, {})
        # A cycle is left out: MuPDF does not draw a form inside itself.
        forms = {name: xref for name, xref in names.items() if xref not in drawing}
        spelt = {_spelling(name): xref for name, xref in forms.items()}
        total = 0
        for item in self._read(xrefs, _draws(spelt)):
            if isinstance(item, int):
                total += item
            elif (form := spelt.get(_ESCAPE.sub(_unescape, item))) is not None:
                total += FORM_DRAW_BYTES + self._form(
                    form, resources, drawing | {form}, left - total
                )
            if total > left:
                break
        return total

    def _form(
        self, xref: int, resources: dict[int, dict[str, int]], drawing: frozenset[int], left: int
    ) -> int:
        if xref not in self._forms:
            cost = self._content([xref], resources, xref, drawing, left)
            if cost > left:
                return cost  # not remembered: a later page may have more left
            self._forms[xref] = cost
        return self._forms[xref]

    def _read(self, xrefs: list[int], draws: re.Pattern[bytes] | None) -> Iterator[int | bytes]:
        """Streams `xrefs` inflated, one chunk at a time: the size of each chunk, then
        the names `draws` finds whole in what was read so far (`/Name Do`). An object
        that is not a stream is empty, as MuPDF draws nothing of it."""
        mupdf = self.mupdf
        pending = b""
        for xref in xrefs:
            try:
                stream = mupdf.pdf_open_stream_number(self.pdf, xref)
            except mupdf.FzErrorBase:
                continue  # not a stream: MuPDF warns and draws nothing of it
            while True:
                if draws is None:
                    size = mupdf.fz_skip(stream, _CHUNK)
                else:
                    size = mupdf.fz_read(stream, self._data, _CHUNK)
                if size == 0:
                    break
                yield size
                if draws is not None:
                    text = pending + bytes(memoryview(self._buffer)[:size])
                    pending = yield from _names(draws, text, final=False)
            pending += b"\n"  # a page's streams are read as one, a token apart
        if draws is not None:
            yield from _names(draws, pending, final=True)


def _draws(forms: dict[bytes, int]) -> re.Pattern[bytes] | None:
    """What finds `/Name Do` for the names of `forms` (None: there are none), and for any
    name with a `#xx` escape, whose name is known once unescaped."""
    if not forms:
        return None
    # Longest first, so that a name is not cut at another it begins with.
    names = b"|".join(re.escape(name) for name in sorted(forms, key=len, reverse=True))
    return re.compile(rb"/(%b|%b*#%b*)\s+Do(?!%b)" % (names, _NAME_CHAR, _NAME_CHAR, _NAME_CHAR))


def _names(draws: re.Pattern[bytes], text: bytes, *, final: bool) -> Generator[bytes, None, bytes]:
    """The names drawn in `text`; returns what is left to read with the next chunk (an
    unfinished `/Name Do`, its white space cut to one space), unless `final`."""
    end = 0
    for match in draws.finditer(text):
        if not final and match.end() == len(text):
            break  # `Do` may go on in the next chunk (`Dox` is another operator)
        yield match.group(1)
        end = match.end()
    if final:
        return b""
    slash = text.rfind(b"/", end)
    unfinished = _UNFINISHED.fullmatch(text, slash) if slash >= 0 else None
    if unfinished is None:
        return b""
    name, space, operator = unfinished.groups()
    return name + (b" " if space else b"") + operator


def _spelling(name: str) -> bytes:
    """The bytes of a resource's name as pymupdf gives it (decoded as UTF-8)."""
    return name.encode("utf-8", "surrogateescape")


def _unescape(match: re.Match[bytes]) -> bytes:
    return bytes([int(match.group(1), 16)])


def count_page(mupdf: Any, page: Any, *, max_chars: int, max_operations: int) -> PageCount:
    """Run `page` through a counting device, stopped once its characters pass
    `max_chars` or its operations pass `max_operations`."""
    cookie = mupdf.FzCookie()
    device = _counting_device(mupdf)(cookie, max_chars, max_operations)
    mupdf.fz_run_page(page.this, device, mupdf.FzMatrix(), cookie)
    mupdf.fz_close_device(device)
    return PageCount(device.chars, device.operations, bool(cookie.abort()))


@functools.cache
def _counting_device(mupdf: Any) -> Any:
    """The device class (built once pymupdf is imported: loading it costs seconds)."""

    class CountingDevice(mupdf.FzDevice2):  # type: ignore[misc]
        def __init__(self, cookie: Any, max_chars: int, max_operations: int) -> None:
            super().__init__()
            for name in (*_DRAWING, *_TEXT, "begin_tile"):
                getattr(self, f"use_virtual_{name}")()
            self.cookie = cookie
            self.max_chars = max_chars
            self.max_operations = max_operations
            self.chars = 0
            self.operations = 0

        def draw(self, *_: Any) -> None:
            self.operations += 1
            if self.operations > self.max_operations:
                self.cookie.set_abort()

        def text(self, _context: Any, text: Any, *_: Any) -> None:
            span = text.head
            while span:
                self.chars += span.len
                span = span.next
            self.draw()
            if self.chars > self.max_chars:
                self.cookie.set_abort()

        def begin_tile(self, *_: Any) -> int:
            self.draw()
            return 0  # not cached: the tile's content is run (and counted)

    # MuPDF calls the device's methods by name.
    for name in _DRAWING:
        setattr(CountingDevice, name, CountingDevice.draw)
    for name in _TEXT:
        setattr(CountingDevice, name, CountingDevice.text)
    return CountingDevice
