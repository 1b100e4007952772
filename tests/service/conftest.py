"""Fixtures of the core integration tests: one Synopsis on test collections, the real page.

Summaries cost seconds of CPU each, so the "More Control Flow Tools" page is ingested
once per session into collections prefixed `TestCore`; tests that need other sources
write them under tmp paths (the page as Markdown has the same chunks, so it reuses the
cached summaries). The smallest local chat model writes them and the answers, whatever
the default model (`core_settings`): dozens of tests read this page, and a larger
default model would make its 34 summaries cost minutes. Its summaries are at most
`CORE_SUMMARY_MAX_TOKENS` long (a two-sentence summary; 120 by default): the guard,
the prompt and the model are the default's, and each call costs about 1 s less (docs/testing.md).
The default model's own text is checked on a short document
(tests/service/test_default_model_integration.py).
The collections are dropped at the end of the session (set
`SYNOPSIS_TEST_KEEP_COLLECTIONS=1` to keep them, so the next run skips the first ingest).
The page's path, its chunk count and its Markdown copy (`write_controlflow_markdown`) are
in tests/support/corpus.py.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from service.ingest.report import IngestReport
from service.settings import Settings
from service.synopsis import Synopsis
from tests.support.corpus import CONTROLFLOW, CORE_PREFIX

#: num_predict of the shared ingest's summaries: a summary of two sentences or so. The
#: model's reply, cut there, is trimmed to its last full sentence and checked by the
#: guard as any other; 120 (the default) took 19 s longer for the page's 34 calls.
CORE_SUMMARY_MAX_TOKENS = 60


@pytest.fixture(scope="session")
def core_settings(settings: Settings, smallest_model: str) -> Settings:
    """The shared stack's settings, on the `TestCore` collections, with the smallest local
    chat model for summaries and answers (the guard and prompts as by default, summaries
    of at most `CORE_SUMMARY_MAX_TOKENS`)."""
    return settings.with_overrides(
        collection_prefix=CORE_PREFIX,
        chat_model=smallest_model,
        answer_model="",
        summary_max_tokens=CORE_SUMMARY_MAX_TOKENS,
    )


@pytest.fixture(scope="session")
def core(core_settings: Settings) -> Iterator[Synopsis]:
    """One Synopsis on the test collections for the whole session; dropped afterwards."""
    synopsis = Synopsis.open(core_settings)
    try:
        yield synopsis
    finally:
        if not os.environ.get("SYNOPSIS_TEST_KEEP_COLLECTIONS"):
            synopsis.store.drop()
        synopsis.close()


@pytest.fixture(scope="session")
def controlflow(core: Synopsis) -> IngestReport:
    """The session's first ingest of the real page (about 34 summaries the first time)."""
    return core.ingest([CONTROLFLOW])
