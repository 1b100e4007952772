"""The hostile corpus (`tests/loaders/hostile.py`): every case ends with a `LoaderError`
naming its source and a clear reason, or loads into a bounded number of chunks; an
endless response is ended by the loader itself (it hangs up at its deadline or size cap).
The cases that could take memory run in a fresh process, whose peak RSS is checked.
How long each case takes is `benchmarks/bench_hostile.py`'s to measure (a figure, not
an assertion): it runs all of them that way."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from loaders.bodies import read_body
from splitters.base.errors import LoaderError
from tests.loaders.hostile import FILES, HTTP, HostileServer, hostile_server, run_case, source_of

ROOT = Path(__file__).parents[2]
CAP = "the size cap of 20000000 bytes"
PDF_CONTENT = (
    r"page 1: the document's content passes 100000000 bytes \(its streams inflated, each form"
    r" counted as often as it is drawn\)"
)

#: case → (outcome, chunks, the reason after "SOURCE: ", as a regular expression).
EXPECTED: dict[str, tuple[str, int, str]] = {
    "corrupt.pdf": ("refused", 0, r"not a readable PDF \(Failed to open stream\)"),
    "truncated.pdf": ("refused", 0, r"damaged PDF \(truncated or corrupt; pages may be missing\)"),
    "encrypted.pdf": ("refused", 0, r"encrypted PDF: a password is required"),
    "10000-pages.pdf": ("refused", 0, r"10000 pages, more than the 5000 a PDF may have"),
    "bomb.docx": (
        "refused",
        0,
        r"member 'word/document\.xml' inflates 285:1 \(77520169 bytes from 272189\), more"
        r" than 100:1 \(a decompression bomb\?\)",
    ),
    "content-bomb.pdf": ("refused", 0, PDF_CONTENT),
    "form-bomb.pdf": ("refused", 0, PDF_CONTENT),
    "binary.html": ("refused", 0, r"binary data, not text"),
    # Byte soup on one line: cut like any over-long line (no chunk over the limit).
    "invalid-utf8.html": ("loaded", 2_434, ""),
    # One paragraph on one line, cut inside the line: 9,950 chunks, none over the limit.
    "single-line-20mb.html": ("loaded", 9_950, ""),
    "nested-5000.html": ("loaded", 1, ""),
    "unclosed-5000.html": ("loaded", 1, ""),
    "headers-10000.md": ("loaded", 10_000, ""),
    "headers-10000.html": ("loaded", 10_000, ""),
    "nested-quotes-5000.md": ("loaded", 21, ""),
    "http-gzip-bomb": ("refused", 0, rf"response exceeds {CAP} \(inflated from gzip\)"),
    "http-stacked-gzip-bomb": ("refused", 0, r"unsupported Content-Encoding 'gzip, gzip'"),
    "http-redirect-loop": ("refused", 0, r"more than 10 redirects"),
    "http-redirect-chain": ("refused", 0, r"more than 10 redirects"),
    "http-crawl-redirect-loop": ("loaded", 1, ""),
    "http-slow-loris": (
        "refused",
        0,
        r"response still arriving after 2 s \(the fetch deadline; \d+ bytes read\)",
    ),
    "http-slow-headers": (
        "refused",
        0,
        r"no complete response within 2 s \(the fetch deadline\)",
    ),
    "http-endless-body": ("refused", 0, rf"response exceeds {CAP}"),
    "http-binary-as-html": ("refused", 0, r"binary data, not text"),
    "http-single-line-20mb": ("loaded", 9_950, ""),
    "http-10000-response-headers": (
        "refused",
        0,
        r"request failed \(RemoteProtocolError: Receive buffer too long\)",
    ),
}
#: The cases whose memory is worth a process of their own, and the bound of each (MB
#: of peak RSS over what the process held after its imports).
MEMORY_BOUND_MB = {
    "10000-pages.pdf": 150,
    "bomb.docx": 150,
    "content-bomb.pdf": 150,
    "form-bomb.pdf": 150,
    "single-line-20mb.html": 500,
    "http-gzip-bomb": 150,
    "http-stacked-gzip-bomb": 100,
    "http-endless-body": 150,
}
FETCH_DEADLINE = 2.0
#: The responses that never end by themselves: the loader must hang up, at its fetch
#: deadline (a trickle) or its size cap (an endless body).
ENDLESS = {"http-slow-loris", "http-slow-headers", "http-endless-body"}


@pytest.fixture(scope="module")
def server() -> Iterator[HostileServer]:
    with hostile_server() as running:
        yield running


def test_every_case_has_an_expected_outcome() -> None:
    assert sorted(EXPECTED) == sorted([*FILES, *HTTP])


def _check(case: str, source: str, outcome: str, chunks: int, reasons: list[str]) -> None:
    expected, expected_chunks, reason = EXPECTED[case]
    assert (outcome, chunks) == (expected, expected_chunks)
    if expected == "refused":
        [message] = reasons
        assert re.fullmatch(rf"{re.escape(source)}: {reason}", message), message
    else:
        assert reasons == []


def _check_hung_up(case: str, server: HostileServer) -> None:
    """An endless response was ended by the loader (the server had more to send), and
    the reason says why: the deadline or the cap. How long each case takes is measured by
    `benchmarks/bench_hostile.py` (docs/reliability.md), not asserted here."""
    if case in ENDLESS:
        assert server.client_hung_up(HTTP[case][0]), f"{case}: the loader never hung up"


# The cases take about a minute of CPU (20 MB pages, 10,000-page PDFs): corpus tests, not
# the unit tier.
@pytest.mark.corpus
@pytest.mark.parametrize("case", [case for case in EXPECTED if case not in MEMORY_BOUND_MB])
def test_case_ends_with_a_reason_or_bounded_chunks(
    case: str, server: HostileServer, tmp_path: Path
) -> None:
    source = source_of(case, base_url=server.base_url, directory=tmp_path)
    outcome = run_case(case, source, fetch_deadline=FETCH_DEADLINE)
    _check(case, source, outcome.outcome, outcome.chunks, outcome.reasons)
    _check_hung_up(case, server)


@pytest.mark.corpus
@pytest.mark.parametrize("case", list(MEMORY_BOUND_MB))
def test_case_memory_is_bounded_in_a_process_of_its_own(case: str, server: HostileServer) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tests.loaders.hostile", case, server.base_url],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    source = server.base_url + HTTP[case][0] if case in HTTP else result["source"]
    _check(case, source, result["outcome"], result["chunks"], result["reasons"])
    _check_hung_up(case, server)
    assert result["peak_rss_mb"] - result["baseline_rss_mb"] < MEMORY_BOUND_MB[case]


def _response(body: bytes, encoding: str) -> httpx.Response:
    return httpx.Response(
        200, headers={"Content-Encoding": encoding}, stream=httpx.ByteStream(body)
    )


def _deflate(data: bytes, wbits: int) -> bytes:
    compressor = zlib.compressobj(6, zlib.DEFLATED, wbits)
    return compressor.compress(data) + compressor.flush()


@pytest.mark.parametrize(
    ("encoding", "wbits"),
    [("gzip", 31), ("x-gzip", 31), ("deflate", 15), ("deflate", -15), ("identity", 0)],
)
def test_read_body_decodes_the_codings_it_asks_for(encoding: str, wbits: int) -> None:
    text = b"<p>hello</p>" * 1000
    body = _deflate(text, wbits) if wbits else text
    response = _response(body, encoding)
    assert read_body(response, source="s", max_bytes=len(text), deadline=1e12, seconds=1) == text


@pytest.mark.parametrize(
    ("body", "encoding", "message"),
    [
        (b"x" * 11, "", "s: response exceeds the size cap of 10 bytes"),
        (_deflate(b"x" * 11, 31), "gzip", "s: response exceeds the size cap of 10 bytes"
         " (inflated from gzip)"),
        (b"x", "br", "s: unsupported Content-Encoding 'br'"),
        (b"not gzip at all", "gzip", "s: corrupt gzip body"
         " (Error -3 while decompressing data: incorrect header check)"),
    ],
)  # fmt: skip
def test_read_body_refuses(body: bytes, encoding: str, message: str) -> None:
    with pytest.raises(LoaderError) as caught:
        read_body(_response(body, encoding), source="s", max_bytes=10, deadline=1e12, seconds=1)
    assert str(caught.value) == message
