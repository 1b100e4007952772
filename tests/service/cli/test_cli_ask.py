"""`synopsis ask` (unit): what it prints for each kind of answer, streamed or not, with a
scripted chat model behind a real `Answerer` and no stack."""

from __future__ import annotations

from collections.abc import Iterator
from types import TracebackType

import pytest
from click.testing import CliRunner

from service import cli
from service.cli import session
from service.query.answer import Answer, Answerer
from service.query.search import Hit, SearchRequest
from service.settings import Settings
from tests.service.query.chat_models import ScriptedStreamModel

HIT = Hit(
    id="1",
    source="docs/kettle.pdf",
    title="Kettle manual",
    headers=["Kettle manual", "Descaling"],
    chunk_index=0,
    content="Fill the kettle with vinegar and water, then boil it.\n\n```sh\ndescale --now\n```",
    summary=None,
    score=1.0,
    leg="joint",
    page_start=3,
    page_end=4,
)
CITATION = "[1] docs/kettle.pdf § Kettle manual > Descaling, pp. 3–4\n"


class FakeSynopsis:
    """Answers from `HIT` with a real Answerer over a scripted model."""

    def __init__(self, tokens: list[str]) -> None:
        self.answerer = Answerer(ScriptedStreamModel(tokens=tokens), model_name="fake")

    def __enter__(self) -> FakeSynopsis:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        pass

    def ask(self, question: str, request: SearchRequest | None = None) -> Answer:
        return self.answerer.answer(question, [HIT])

    def ask_stream(
        self, question: str, request: SearchRequest | None = None
    ) -> Iterator[str | Answer]:
        return self.answerer.stream(question, [HIT])


def _ask(monkeypatch: pytest.MonkeyPatch, tokens: list[str], *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr(session, "open_synopsis", lambda settings: FakeSynopsis(tokens))
    result = CliRunner().invoke(cli.main, ["ask", *args], obj=Settings())
    return result.exit_code, result.stdout, result.stderr


GROUNDED = ["Fill the kettle ", "with vinegar and water, then boil it [1]."]
INVENTED = ["Run ", "`descale --all` twice [1]."]
EXTRACTIVE = (
    "Fill the kettle with vinegar and water, then boil it. [1]\n\n```sh\ndescale --now\n```"
)


@pytest.mark.parametrize(
    ("stream", "stderr"), [([], ""), (["--stream"], "(draft, checked when complete)\n")]
)
def test_a_generated_answer(
    monkeypatch: pytest.MonkeyPatch, stream: list[str], stderr: str
) -> None:
    assert _ask(monkeypatch, GROUNDED, "How do I descale?", *stream) == (
        0,
        "Fill the kettle with vinegar and water, then boil it [1].\n\n"
        "(generated answer, grounding support 1.00)\n" + CITATION,
        stderr,
    )


def test_an_extractive_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _ask(monkeypatch, INVENTED, "How do I descale?") == (
        0,
        EXTRACTIVE + "\n\n(extractive answer: quoted from passage [1]; the model's reply "
        "was not grounded)\n" + CITATION,
        "(grounding: code not in the passages: descale --all)\n",
    )


def test_a_streamed_reply_that_fails_is_followed_by_the_extractive_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code, stdout, stderr = _ask(monkeypatch, INVENTED, "How do I descale?", "--stream")
    assert (code, stderr) == (
        0,
        "(draft, checked when complete)\n(grounding: code not in the passages: descale --all)\n",
    )
    assert stdout == (
        "Run `descale --all` twice [1].\n\n"
        "(replaced: the reply above failed the grounding check)\n\n"
        + EXTRACTIVE
        + "\n\n(extractive answer: quoted from passage [1]; the model's reply was not "
        "grounded)\n" + CITATION
    )


@pytest.mark.parametrize("stream", [[], ["--stream"]])
def test_a_refusal(monkeypatch: pytest.MonkeyPatch, stream: list[str]) -> None:
    assert _ask(monkeypatch, GROUNDED, "How do I descale with Kubernetes?", *stream) == (
        0,
        "I don't know based on the provided context.\n",
        "(no retrieved passage mentions 'Kubernetes')\n",
    )
