"""A corpus of hostile inputs for the loaders, generated, and a runner that measures each.

Files are functions returning bytes (`FILES`: name → generator). HTTP cases are paths of
`HostileServer`, a local `http.server` in a thread (`HTTP`: name → path). `run_case`
drives one case through `loaders.load` (and `splitters.chunk_documents` when it loads)
and reports its outcome, reason, chunk count and wall time; `python -m
tests.loaders.hostile CASE [BASE_URL]` does it in a fresh process and prints the result
with the process's peak RSS as one JSON line, so that one case's memory cannot hide
another's (`benchmarks/bench_hostile.py`, `tests/loaders/test_hostile.py`).
"""

from __future__ import annotations

import functools
import gzip
import json
import random
import resource
import struct
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pymupdf

import loaders.pdf  # noqa: F401  (imported here, as run_case would, before any baseline)
from loaders import LoaderError, LoadOptions, load
from splitters import chunk_documents
from tests.loaders.bombs import docx_bomb, form_bomb_pdf, text_bomb_pdf
from tests.loaders.pdfs import sample_pdf

#: Options every case is loaded with: the loader's defaults, shorter time limits.
TIMEOUT = 5.0
FETCH_DEADLINE = 10.0
MAX_BYTES = 20_000_000
BOMB_INFLATED = 2 * 1024**3  # what the decompression bomb inflates to: 2 GiB
#: When an endless response stops if the client never hangs up: long past any fetch
#: deadline and size cap, so a loader that ignored them ends with a wrong outcome (it
#: loads the page), not with a test that hangs.
GIVE_UP_SECONDS = 120.0
GIVE_UP_BYTES = 3 * MAX_BYTES
PDF_PAGES = 10_000


# --- files -----------------------------------------------------------------------------


def corrupt_pdf() -> bytes:
    """A `%PDF` header and 200 KB of random bytes."""
    rng = random.Random(7)
    return b"%PDF-1.7\n" + rng.randbytes(200_000)


def truncated_pdf() -> bytes:
    """A valid two-page PDF cut in half."""
    data = sample_pdf()
    return data[: len(data) // 2]


def encrypted_pdf() -> bytes:
    """A PDF that needs a password to be opened (AES-256)."""
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "secret manual text", fontsize=11)
    data: bytes = doc.tobytes(
        encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="user", owner_pw="owner"
    )
    doc.close()
    return data


@functools.cache
def many_pages_pdf(pages: int = PDF_PAGES) -> bytes:
    """A valid PDF of `pages` pages, each a header and a numbered paragraph.

    Written object by object: pymupdf's `new_page` is quadratic (10,000 pages: 210 s);
    this takes a fraction of a second.
    """
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"",  # the page tree, once the pages' numbers are known
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    kids = []
    for number in range(1, pages + 1):
        text = (
            f"BT /F1 20 Tf 72 712 Td (Chapter {number}) Tj ET\n"
            f"BT /F1 11 Tf 72 672 Td (Body text of page {number}.) Tj ET\n"
        ).encode()
        objects.append(b"<< /Length %d >>\nstream\n%b\nendstream" % (len(text), text))
        kids.append(len(objects) + 1)
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R"
            b" /Resources << /Font << /F1 3 0 R >> >> >>" % (len(objects))
        )
    objects[1] = b"<< /Type /Pages /Count %d /Kids [%b] >>" % (
        pages,
        b" ".join(b"%d 0 R" % kid for kid in kids),
    )
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%b\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def binary_html() -> bytes:
    """Random bytes named `.html` (a PNG header first)."""
    return b"\x89PNG\r\n\x1a\n" + random.Random(1).randbytes(500_000)


def invalid_utf8_html() -> bytes:
    """A 1 MB page whose text is byte soup: no control bytes, but not UTF-8 either."""
    rng = random.Random(3)
    soup = bytes(rng.choice(range(0x80, 0x100)) for _ in range(1_000_000))
    return b"<html><head><meta charset='utf-8'></head><body><p>" + soup + b"</p></body></html>"


def single_line_html(size: int = 19_900_000) -> bytes:
    """A page just under the 20 MB size cap, all on one line, one paragraph."""
    head, tail = b"<html><body><h1>One line</h1><p>", b"</p></body></html>"
    words = b"word and more words "
    return head + words * ((size - len(head) - len(tail)) // len(words)) + tail


def nested_html(depth: int = 5_000) -> bytes:
    """`depth` nested `<div>`s around a paragraph and a code block."""
    body = "<div>" * depth + "<p>deep text</p><pre>  code\n</pre>" + "</div>" * depth
    return f"<html><body>{body}</body></html>".encode()


def unclosed_nested_html(depth: int = 5_000) -> bytes:
    """`depth` nested elements that are never closed (`<div><span><b>…`)."""
    return ("<html><body>" + "<div><span><b>" * (depth // 3) + "text").encode()


def headers_markdown(count: int = 10_000) -> bytes:
    """A Markdown page of `count` headers, each with a line of text, six levels deep."""
    lines = []
    for number in range(count):
        lines.append("#" * (number % 6 + 1) + f" Header {number}\n\nText of section {number}.\n")
    return "\n".join(lines).encode()


def headers_html(count: int = 10_000) -> bytes:
    """An HTML page of `count` `<h2>`/`<h3>` headers, each with a paragraph."""
    parts = [f"<h{number % 2 + 2}>Header {number}</h{number % 2 + 2}><p>Text {number}.</p>"
             for number in range(count)]  # fmt: skip
    return (
        "<html><body><main><h1>Headers</h1>" + "".join(parts) + "</main></body></html>"
    ).encode()


def nested_quote_markdown(depth: int = 5_000) -> bytes:
    """Markdown nested `depth` levels deep: blockquotes in list items."""
    return ("# Deep\n\n" + "> - " * depth + "deep text\n").encode()


#: File cases: name (its suffix picks the loader) → the bytes.
FILES: dict[str, Callable[[], bytes]] = {
    "corrupt.pdf": corrupt_pdf,
    "truncated.pdf": truncated_pdf,
    "encrypted.pdf": encrypted_pdf,
    "10000-pages.pdf": many_pages_pdf,
    # Decompression bombs (tests/loaders/bombs.py): 300 KB inflating to 78 MB of XML; 750
    # KB to 200 MB of text operators; 2 KB of forms drawing forms, ten million sentences.
    "bomb.docx": docx_bomb,
    "content-bomb.pdf": text_bomb_pdf,
    "form-bomb.pdf": form_bomb_pdf,
    "binary.html": binary_html,
    "invalid-utf8.html": invalid_utf8_html,
    "single-line-20mb.html": single_line_html,
    "nested-5000.html": nested_html,
    "unclosed-5000.html": unclosed_nested_html,
    "headers-10000.md": headers_markdown,
    "headers-10000.html": headers_html,
    "nested-quotes-5000.md": nested_quote_markdown,
}


# --- HTTP ------------------------------------------------------------------------------


@functools.cache
def gzip_bomb(inflated: int = BOMB_INFLATED) -> bytes:
    """A valid gzip stream of `inflated` zero bytes (2 GiB → 2 MB), built in a second.

    Deflate after a full flush starts afresh, so the compressed 8 MiB of zeros is the
    same bytes every time: compressed once, repeated. Only the CRC sees every byte.
    """
    segment_size = 8 * 1024 * 1024
    zeros = bytes(segment_size)
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    segment = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    count = inflated // segment_size
    crc = 0
    for _ in range(count):
        crc = zlib.crc32(zeros, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    trailer = struct.pack("<II", crc, (count * segment_size) & 0xFFFFFFFF)
    return header + segment * count + compressor.flush() + trailer


@functools.cache
def stacked_gzip_bomb() -> bytes:
    """The bomb gzipped again (`Content-Encoding: gzip, gzip`): 10 KB → 2 MB → 2 GiB."""
    return gzip.compress(gzip_bomb(), 9)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _head(self, status: int, headers: dict[str, str]) -> None:
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()

    def _body(self, data: bytes, content_type: str = "text/html", **headers: str) -> None:
        self._head(200, {"Content-Type": content_type, "Content-Length": str(len(data)), **headers})
        self.wfile.write(data)

    def _going_on(self, started: float, sent: int) -> bool:
        """Whether an endless response goes on (`GIVE_UP_SECONDS`, `GIVE_UP_BYTES`)."""
        server: HostileServer = self.server  # type: ignore[assignment]
        return (
            not server.stopping.is_set()
            and time.monotonic() - started < GIVE_UP_SECONDS
            and sent < GIVE_UP_BYTES
        )

    def _endless(self, first: bytes, piece: bytes, pause: float) -> None:
        """Headers (no length, close delimited), `first`, then `piece` every `pause` s,
        until the client hangs up (or the server gives up)."""
        self.close_connection = True
        self._head(200, {"Content-Type": "text/html; charset=utf-8", "Connection": "close"})
        started, sent = time.monotonic(), len(first)
        try:
            self.wfile.write(first)
            self.wfile.flush()
            while self._going_on(started, sent):
                self.wfile.write(piece)
                self.wfile.flush()
                sent += len(piece)
                if pause:
                    time.sleep(pause)
        except OSError:
            self.server.client_left(self.path)  # type: ignore[attr-defined]

    def _trickled_headers(self, pause: float) -> None:
        """A status line, then one byte of a header line every `pause` s: the response's
        headers never end, and no single read waits long."""
        self.close_connection = True
        started = time.monotonic()
        try:
            self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
            self.wfile.flush()
            while self._going_on(started, 0):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(pause)
        except OSError:
            self.server.client_left(self.path)  # type: ignore[attr-defined]

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/robots.txt":
            self._body(b"User-agent: *\nAllow: /\n", "text/plain")
        elif path == "/bomb.html":
            self._body(gzip_bomb(), **{"Content-Encoding": "gzip"})
        elif path == "/stacked-bomb.html":
            self._body(stacked_gzip_bomb(), **{"Content-Encoding": "gzip, gzip"})
        elif path in ("/loop/a", "/loop/b"):
            target = "/loop/b" if path == "/loop/a" else "/loop/a"
            self._head(302, {"Location": target, "Content-Length": "0"})
        elif path.startswith("/chain/"):
            number = int(path.rsplit("/", 1)[1] or 0)
            self._head(302, {"Location": f"/chain/{number + 1}", "Content-Length": "0"})
        elif path == "/crawl-loop/index.html":
            links = "".join(f'<a href="r{n}.html">r{n}</a> ' for n in range(20))
            self._body(f"<main><h1>Loop</h1><p>{links}</p></main>".encode())
        elif path.startswith("/crawl-loop/r"):
            self._head(302, {"Location": "/crawl-loop/index.html", "Content-Length": "0"})
        elif path == "/slow-loris.html":
            self._endless(b"<html><body><p>", b"x", 1.0)
        elif path == "/slow-headers.html":
            self._trickled_headers(pause=0.5)
        elif path == "/endless.html":
            self._endless(b"<html><body><p>", b"word " * 13_000, 0.0)
        elif path == "/binary.html":
            self._body(binary_html())
        elif path == "/single-line-20mb.html":
            self._body(single_line_html())
        elif path == "/headers-10000":
            self.send_response(200)
            for number in range(10_000):
                self.send_header(f"X-Header-{number}", "v" * 20)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", "30")
            self.end_headers()
            self.wfile.write(b"<main><h1>Headers</h1></main>\n")
        else:
            self._body(b"not found", "text/plain")


class HostileServer(ThreadingHTTPServer):
    """Serves the HTTP cases on 127.0.0.1 (a free port) until `stop()`.

    An endless response (a trickle, an endless body) goes on until its client hangs up:
    `client_hung_up(path)` tells whether a client did, i.e. the loader ended the fetch
    itself, as its deadline or size cap should, while the server had more to send.
    """

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.stopping = threading.Event()
        self._left: set[str] = set()
        self._changed = threading.Condition()
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def client_left(self, path: str) -> None:
        with self._changed:
            self._left.add(path)
            self._changed.notify_all()

    def client_hung_up(self, path: str, *, wait: float = 30.0) -> bool:
        """Whether a client hung up on `path` mid-response. The server sees it at its next
        write (a trickle writes every second): waits for that, `wait` s at most."""
        with self._changed:
            return self._changed.wait_for(lambda: path in self._left, wait)

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client hanging up on a bomb or a trickle is the point, not an error

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def start(self) -> HostileServer:
        gzip_bomb(), stacked_gzip_bomb()  # built before the clock of any case starts
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.shutdown()
        self.server_close()


@contextmanager
def hostile_server() -> Iterator[HostileServer]:
    server = HostileServer().start()
    try:
        yield server
    finally:
        server.stop()


#: HTTP cases: name → (path, crawl depth).
HTTP: dict[str, tuple[str, int]] = {
    "http-gzip-bomb": ("/bomb.html", 0),
    "http-stacked-gzip-bomb": ("/stacked-bomb.html", 0),
    "http-redirect-loop": ("/loop/a", 0),
    "http-redirect-chain": ("/chain/0", 0),
    "http-crawl-redirect-loop": ("/crawl-loop/index.html", 2),
    "http-slow-loris": ("/slow-loris.html", 0),
    "http-slow-headers": ("/slow-headers.html", 0),
    "http-endless-body": ("/endless.html", 0),
    "http-binary-as-html": ("/binary.html", 0),
    "http-single-line-20mb": ("/single-line-20mb.html", 0),
    "http-10000-response-headers": ("/headers-10000", 0),
}

CASES = [*FILES, *HTTP]


# --- running one case ------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """How one case ended: `loaded` (with `chunks`) or `refused` (with the reasons)."""

    case: str
    outcome: str
    reasons: list[str]
    documents: int
    chunks: int
    seconds: float
    peak_rss_mb: float = 0.0


def source_of(case: str, *, base_url: str = "", directory: Path | None = None) -> str:
    """The source to load for `case`: a file case is written to `directory` first."""
    if case in FILES:
        assert directory is not None
        path = directory / case
        path.write_bytes(FILES[case]())
        return str(path)
    return base_url + HTTP[case][0]


def run_case(case: str, source: str, *, fetch_deadline: float = FETCH_DEADLINE) -> Outcome:
    """Load (and, if it loads, chunk) one case's `source`; errors are collected, not raised.

    The time covers loading and chunking. Anything but a `LoaderError` propagates: that
    is a failure.
    """
    errors: list[LoaderError] = []
    depth = HTTP[case][1] if case in HTTP else 0
    options = LoadOptions(
        timeout=TIMEOUT, fetch_deadline=fetch_deadline, max_bytes=MAX_BYTES, crawl_depth=depth
    )
    started = time.monotonic()
    documents = list(load([source], options=options, on_error=errors.append))
    chunks = sum(1 for _ in chunk_documents(documents))
    seconds = time.monotonic() - started
    return Outcome(
        case=case,
        outcome="loaded" if documents else "refused",
        reasons=[str(error) for error in errors],
        documents=len(documents),
        chunks=chunks,
        seconds=round(seconds, 2),
    )


def _peak_rss_mb() -> float:
    # ru_maxrss is in KiB on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str]) -> int:
    """`CASE [BASE_URL]`: run one case here and print its `Outcome` as one JSON line."""
    case, base_url = argv[0], argv[1] if len(argv) > 1 else ""
    # Everything is imported (pymupdf too) before the baseline, so the figure is the case's.
    pymupdf.open().close()
    with tempfile.TemporaryDirectory() as directory:
        source = source_of(case, base_url=base_url, directory=Path(directory))
        before = _peak_rss_mb()
        outcome = run_case(case, source)
        peak = _peak_rss_mb()
    result = asdict(outcome) | {
        "source": source,
        "peak_rss_mb": round(peak, 1),
        "baseline_rss_mb": round(before, 1),
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
