"""The search page in a real browser (Debian's Chromium, driven by Playwright) against
`synopsis`'s app on the real stack: the key prompt, a search with its options, a streamed
answer with clickable citations and its kind, an upload whose job is followed to done,
indexed `<script>` and event handlers rendered inert, and no script or policy error on
the way.

Screenshots go to `SYNOPSIS_SCREENSHOTS_DIR` when it is set (docs/ has the last ones).
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from playwright.sync_api import Browser, Page, sync_playwright

from service.api import create_app
from service.connections import connect_weaviate
from service.index.store import Store
from service.ingest.report import IngestReport
from service.jobs import JobStore
from service.query.answer import DONT_KNOW
from service.settings import Settings
from tests.support.corpus import CONTROLFLOW

pytestmark = pytest.mark.integration

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# Headless, and nothing that reaches out on its own (this machine's network is closed).
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
READ_KEY = "browser-read-key-0123456789"
WRITE_KEY = "browser-write-key-9876543210"
QUESTION = "I want to write a Python script that prints numbers from 1 to 30."
#: A model call (an answer, or the upload's summaries) on a CPU that may be busy.
MODEL_TIMEOUT_MS = 900_000
UPLOAD_PREFIX = "TestPageUpload"
#: A page with markup that must stay text: a script and an event handler.
HOSTILE_MD = """# Kettle care

## Descaling

Descale the kettle every month with white vinegar.
<script>window.pwned = 1</script> <img src=x onerror="window.pwned = 2">

```sh
descale --vinegar  # one cup
```
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serve(settings: Settings) -> Iterator[str]:
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, name=f"page-server-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while not server.started:
        assert thread.is_alive(), "the server stopped while starting"
        assert time.monotonic() < deadline, "the server did not start within 120 s"
        time.sleep(0.1)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


@pytest.fixture(scope="module")
def base_url(core_settings: Settings, controlflow: IngestReport) -> Iterator[str]:
    """The app over the shared controlflow index: read key only, no job worker."""
    settings = core_settings.with_overrides(api_read_keys=READ_KEY, jobs_workers=0)
    yield from _serve(settings)


def _drop(settings: Settings) -> None:
    client = connect_weaviate(settings)
    try:
        Store(client, prefix=settings.external.collection_prefix).drop()
        JobStore(client, prefix=settings.external.collection_prefix).drop()
    finally:
        client.close()


@pytest.fixture(scope="module")
def upload_url(cheap_settings: Settings) -> Iterator[str]:
    """The app over collections of its own, with a job worker, for uploads (whose summary
    only needs to exist: `cheap_settings`)."""
    settings = cheap_settings.with_overrides(
        collection_prefix=UPLOAD_PREFIX,
        api_read_keys=READ_KEY,
        api_write_keys=WRITE_KEY,
        jobs_workers=1,
        jobs_poll_seconds=0.2,
        summary_timeout=max(cheap_settings.summaries.timeout, 600.0),
    )
    _drop(settings)
    try:
        yield from _serve(settings)
    finally:
        _drop(settings)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One Chromium for the module (it takes seconds to start); each test has its own
    context (no cookies or storage shared)."""
    if not Path(CHROMIUM).exists():
        pytest.fail("Chromium is missing: scripts/bootstrap.sh installs Debian's chromium")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    try:
        opened = context.new_page()
        problems: list[str] = []
        opened.on("pageerror", lambda error: problems.append(f"page error: {error}"))
        opened.on(
            "console",
            lambda message: (
                problems.append(f"console {message.type}: {message.text}")
                if message.type == "error" and "401" not in message.text
                else None
            ),
        )
        yield opened
    finally:
        context.close()
    assert problems == []


def _screenshot(page: Page, name: str, tmp_path: Path) -> None:
    directory = Path(os.environ.get("SYNOPSIS_SCREENSHOTS_DIR", tmp_path))
    directory.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=directory / f"{name}.png", full_page=True)


def _keys(page: Page, read: str, write: str | None = None) -> None:
    """Open the key box (folded away until a request needs a key) and fill it in.

    A view that loads something as it opens (the sources) opens the box itself when that
    request is refused for want of a key: wait for the page's own requests to end first,
    or a click meant to open the box could close it again (CI: the key field was hidden).
    """
    page.wait_for_load_state("networkidle")
    if page.get_attribute("#key-box", "open") is None:
        page.click("#key-box summary")
    page.wait_for_selector("#api-key", state="visible")
    page.fill("#api-key", read)
    if write is not None:
        page.fill("#write-key", write)


def _idle(page: Page) -> None:
    """Wait until the form's request has ended (its buttons are enabled again)."""
    # (A selector, not a script: the page's CSP allows no evaluated string.)
    page.wait_for_selector("#search-button:not([disabled])")


def test_search_asks_for_the_key_then_shows_the_originals_with_their_summaries(
    page: Page, base_url: str, tmp_path: Path
) -> None:
    page.goto(f"{base_url}/")
    page.fill("#query", QUESTION)
    page.click("#search-button")
    page.wait_for_selector("#status.error")
    assert (page.text_content("#status") or "").startswith("HTTP 401")
    assert page.get_attribute("#key-box", "open") is not None  # opened for the key

    page.fill("#api-key", READ_KEY)
    page.press("#api-key", "Tab")  # `change`: kept in sessionStorage
    page.click("#search-button")
    page.wait_for_selector("#hits li")
    paths = page.locator("#hits li .path").all_text_contents()
    assert page.locator("#hits li .summary").count() == len(paths)  # every chunk has one
    # Each says what it is: generated by the model (named), or extractive.
    badges = page.locator("#hits li .summary .badge").all()
    assert len(badges) == len(paths)
    for badge in badges:
        kind, label = badge.get_attribute("data-kind"), badge.inner_text()
        assert (kind, label.startswith("generated by ")) in {
            ("generated", True),
            ("extractive", False),
        }
    assert page.text_content("#status") == f"{len(paths)} results"

    # The default mode's ranking reads the summaries (it differs between machines'
    # model builds); on the chunks alone, the range() section comes first everywhere.
    page.select_option("#mode", "originals")
    page.click("#search-button")
    _idle(page)
    paths = page.locator("#hits li .path").all_text_contents()
    assert "range()" in paths[0], paths
    # Where to open it: the page and the section's id in it.
    assert (
        page.locator("#hits li .source").first.inner_text() == f"{CONTROLFLOW}#the-range-function"
    )
    page.locator("#hits li details summary").first.click()
    # The chunk's Markdown rendered: its code block as highlighted code.
    code = page.locator("#hits li pre.md-code code").first
    assert "range(" in code.inner_text()
    assert code.locator("span.tok-kw").count() > 0
    _screenshot(page, "web-search", tmp_path)

    # The options reach the API: a source prefix that matches nothing finds nothing.
    page.select_option("#mode", "originals")
    page.fill("#k", "3")
    page.click("#search-button")
    page.wait_for_selector("#hits li")
    assert page.locator("#hits li").count() == 3
    page.fill("#source-prefix", "/nowhere/")
    page.click("#search-button")
    page.wait_for_selector("#status:has-text('No results.')")

    # The key stays for the tab: a reload searches without asking again.
    page.reload()
    page.fill("#query", "the break statement in loops")
    page.click("#search-button")
    page.wait_for_selector("#hits li")
    assert not page.locator("#status.error").count()


#: Records, as the page changes, whether the answer was marked as a draft and which
#: badges the draft showed. The draft may last a single task (a reply that arrives in
#: one network read: a fast model, or a proxy that buffers), which no polling for a
#: selector would see; the observer's records keep what the page showed.
RECORD_DRAFT = """() => {
  const text = document.getElementById("answer-text");
  const badge = document.getElementById("answer-kind");
  const seen = { marked: false, badges: [] };
  window.draftSeen = seen;
  const isDraft = (classes) => (classes || "").split(/\\s+/).includes("draft");
  new MutationObserver((records) => {
    // The checked answer removes the class: that record's old value has it.
    if (records.some((record) => isDraft(record.oldValue))) seen.marked = true;
  }).observe(text, { attributes: true, attributeFilter: ["class"], attributeOldValue: true });
  new MutationObserver((records) => {
    for (const record of records) {
      for (const node of [...record.removedNodes, ...record.addedNodes]) {
        const shown = node.textContent;
        if (shown.startsWith("draft") && !seen.badges.includes(shown)) seen.badges.push(shown);
      }
    }
  }).observe(badge, { childList: true });
}"""


def test_ask_streams_an_answer_with_its_kind_and_clickable_citations(
    page: Page, base_url: str, tmp_path: Path
) -> None:
    page.goto(f"{base_url}/")
    _keys(page, READ_KEY)
    page.fill("#query", QUESTION)
    page.evaluate(RECORD_DRAFT)
    page.click("#ask-button")
    page.wait_for_selector("#answer-kind[data-kind]", timeout=MODEL_TIMEOUT_MS)
    # The model's tokens were shown as a draft (they are checked once the reply is
    # whole), until the checked answer replaced them.
    assert page.evaluate("window.draftSeen") == {
        "marked": True,
        "badges": ["draft: not yet checked"],
    }
    assert page.locator("#answer-text.draft").count() == 0
    kind = page.get_attribute("#answer-kind", "data-kind")
    answer = page.inner_text("#answer-text").strip()
    citations = page.locator("#citations li").all_text_contents()
    assert kind in ("generated", "extractive", "refusal")
    if kind == "refusal":  # the model said it does not know: nothing to cite
        assert (answer, citations) == (DONT_KNOW, [])
        return
    assert answer
    assert citations
    if kind == "extractive":  # the reply was not grounded, or the model did not answer
        status = page.text_content("#status") or ""
        assert "not grounded" in status or "did not answer" in status
    # [1] in the answer opens the first citation's passage.
    page.locator("#answer-text a.cite").first.click()
    assert page.locator("#citation-1 details").get_attribute("open") is not None
    assert page.locator("#citation-1 .markdown").inner_text().strip()
    _screenshot(page, "web-ask", tmp_path)


def test_an_upload_is_followed_to_done_and_its_markup_stays_text(
    page: Page, upload_url: str, tmp_path: Path
) -> None:
    upload = tmp_path / "kettle.md"
    upload.write_text(HOSTILE_MD)
    page.goto(f"{upload_url}/#sources")
    _keys(page, READ_KEY, WRITE_KEY)
    page.set_input_files("#files", str(upload))
    page.click("#upload-button")
    page.wait_for_selector("#job-state[data-state]")
    page.wait_for_selector(
        "#job-state[data-state='done'], #job-state[data-state='failed']", timeout=MODEL_TIMEOUT_MS
    )
    assert page.get_attribute("#job-state", "data-state") == "done", page.inner_text("#job")
    assert "summarized 1/1" in page.inner_text("#job-progress")
    assert page.locator("#job-bar").get_attribute("value") == "1"
    rows = page.locator("#documents tbody tr").all_inner_texts()
    assert [row.split("\t")[:4] for row in rows] == [["kettle.md", "Kettle care", "1", "complete"]]
    _screenshot(page, "web-upload", tmp_path)

    page.goto(f"{upload_url}/#search")
    page.fill("#query", "how often should I descale the kettle")
    page.click("#search-button")
    page.wait_for_selector("#hits li")
    _idle(page)
    page.locator("#hits li details summary").first.click()
    shown = page.locator("#hits li .markdown").first.inner_text()
    assert "<script>window.pwned = 1</script>" in shown  # the markup is text on the page
    assert page.evaluate("window.pwned") is None
    assert page.locator("#hits img, #hits script").count() == 0


def test_a_query_with_markup_is_shown_as_text(page: Page, base_url: str) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(f"{base_url}/?q=" + "%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E")
    _keys(page, READ_KEY)
    page.click("#search-button")
    page.wait_for_selector("#status:not(:empty)")
    _idle(page)
    assert dialogs == []
    assert page.locator("img").count() == 0
    assert page.input_value("#query") == "<img src=x onerror=alert(1)>"
