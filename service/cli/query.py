"""`synopsis search` and `synopsis ask`: the index's hits, and answers citing them."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from service.cli import session
from service.cli.defaults import default_of
from service.cli.output import note
from service.query.modes import MODES
from service.settings import ANSWER_MAX_K, Settings

if TYPE_CHECKING:  # the heavy modules load only in the commands that need them
    from service.query.answer import Answer
    from service.query.search import Hit

__all__ = ["ask", "search"]


#: `--version` of a search or a question (`service.index.versions`).
_version_filter = click.option(
    "--version",
    "version",
    default=None,
    metavar="LABEL",
    help="Read only the chunks of this version label ('*': every version). Default: "
    "the latest synced version of each group of registered sources, and every chunk "
    "of no group.",
)


def _where(hit: Hit) -> str:
    """A hit's version and when its chunk was written, to end a line of output (nothing
    for a chunk written before chunks kept them)."""
    if not (hit.version or hit.indexed_at):
        return ""
    written = f"{hit.indexed_at:%Y-%m-%d %H:%M} UTC" if hit.indexed_at else "unknown"
    return f"  (version {hit.version or 'none'}, indexed {written})"


@click.command("search")
@click.argument("query")
@click.option(
    "--k",
    "k",
    type=click.IntRange(1, 100),
    default=None,
    help=f"Originals to return (default {default_of('search_k')}).",
)
@click.option(
    "--mode",
    type=click.Choice(MODES),
    default=None,
    help="joint (default: SYNOPSIS_SEARCH_MODE): each chunk scored with its summary; "
    "summaries: hybrid over summaries → originals; originals: over the chunks alone; "
    "both: the two lists; fused: reciprocal-rank fusion of both.",
)
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1),
    default=None,
    help=f"0 = BM25 only, 1 = vector only (default {default_of('search_alpha')}).",
)
@click.option("--source", default=None, help="Only this source (exact).")
@click.option("--source-prefix", default=None, help="Only sources starting with this.")
@click.option(
    "--header-prefix",
    default=None,
    help="Only chunks whose header path starts with this ('A > B').",
)
@click.option(
    "--max-distance",
    type=click.FloatRange(0, 2),
    default=None,
    help="Absolute relevance gate: drop hits farther than this cosine distance (0 = off).",
)
@_version_filter
@click.option("--explain", is_flag=True, help="Show per-leg scores and distances.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON array of hits.")
@click.pass_obj
def search(
    settings: Settings,
    query: str,
    k: int | None,
    mode: str | None,
    alpha: float | None,
    source: str | None,
    source_prefix: str | None,
    header_prefix: str | None,
    max_distance: float | None,
    version: str | None,
    explain: bool,
    as_json: bool,
) -> None:
    """Search the index for QUERY and print the original chunks that match, each with its
    source's version and when it was indexed."""
    from service.index.records import header_path
    from service.query.search import search_request

    request = search_request(
        settings,
        query,
        k=k or None,
        mode=mode,
        alpha=alpha,
        source=source,
        source_prefix=source_prefix,
        header_prefix=header_prefix,
        max_vector_distance=max_distance,
        version=version,
        explain=explain,
    )
    request.validate()  # a bad request is reported before the stack is started or reached
    with session.open_synopsis(settings) as synopsis:
        hits = synopsis.search(request)
        pending = synopsis.pending_summaries() if request.mode != "originals" else 0
    if pending:
        # Not "ingest again": the API's ingest jobs write summaries after the chunks are
        # searchable, so pending summaries are usually being written right now.
        note(
            f"{pending} chunks are still waiting for their summary and are searched by their "
            "text meanwhile; a running ingest (an API job or `synopsis ingest`) keeps writing "
            "them, and `synopsis docs list` shows how many are left. If no ingest is "
            "running, ingesting the source again completes them."
        )
    if as_json:
        click.echo(json.dumps([hit.to_dict() for hit in hits], ensure_ascii=False, indent=2))
        return
    if not hits:
        click.echo("no results")
    for rank, hit in enumerate(hits, start=1):
        path = header_path(hit.headers)
        click.echo(f"{rank}. {path}  [{hit.leg} {hit.score:.3f}]")
        click.echo(f"   {hit.source}{_where(hit)}")
        if hit.summary:  # on one line: a summary's own "1." must not look like a rank
            click.echo(f"   summary ({_summary_kind(hit)}): {' '.join(hit.summary.split())}")
        if explain:
            click.echo(f"   distance: {hit.distance}, scores: {hit.scores}")
        preview = " ".join(hit.content.split())[:240]
        click.echo(f"   {preview}\n")


@click.command("ask")
@click.argument("question")
@click.option(
    "--k",
    "k",
    type=click.IntRange(1, ANSWER_MAX_K),
    default=None,
    help=f"Passages to retrieve (default {default_of('search_k')}).",
)
@click.option(
    "--max-distance",
    type=click.FloatRange(0, 2),
    default=None,
    help="Relevance gate (cosine distance; default "
    f"{default_of('answer_max_vector_distance')}; 0 = off): with no passage this close, "
    "the answer is 'I don't know'.",
)
@click.option(
    "--stream",
    is_flag=True,
    help="Print the model's reply as it is written; if it then fails the grounding "
    "check, the extractive answer follows it.",
)
@_version_filter
@click.pass_obj
def ask(
    settings: Settings,
    question: str,
    k: int | None,
    max_distance: float | None,
    stream: bool,
    version: str | None,
) -> None:
    """Answer QUESTION from the indexed documents only, citing them.

    The model's reply is checked against the passages it was given; when it fails the
    check (code or names that no passage has, sentences no passage supports), the answer
    is the best passage's lead sentences and code block instead. A line after the answer
    says which it is (generated or extractive); "I don't know" needs no such line.
    """
    from service.query.answer import Answer
    from service.query.search import search_request

    request = search_request(
        settings,
        question,
        k=k or None,
        max_vector_distance=(
            settings.answers.max_vector_distance if max_distance is None else max_distance
        ),
        version=version,
    )
    request.validate()  # a bad request is reported before the stack is started or reached
    with session.open_synopsis(settings) as synopsis:
        if not stream:
            answer = synopsis.ask(question, request)
            click.echo(answer.text)
        else:
            streamed: list[str] = []
            for item in synopsis.ask_stream(question, request):
                if isinstance(item, Answer):
                    answer = item
                    break
                if not streamed:
                    click.echo("(draft, checked when complete)", err=True)
                streamed.append(item)
                click.echo(item, nl=False)
            if not streamed:  # a refusal without the model: nothing was drafted
                click.echo(answer.text)
            else:
                click.echo()
                if answer.text != "".join(streamed).strip():
                    click.echo("\n(replaced: the reply above failed the grounding check)\n")
                    click.echo(answer.text)
    if answer.kind != "refusal":  # a refusal says so itself
        click.echo(f"\n{_answer_kind(answer)}")
    if answer.missing_terms:
        named = ", ".join(repr(term) for term in answer.missing_terms)
        click.echo(f"(no retrieved passage mentions {named})", err=True)
    if answer.grounding is not None:
        for reason in answer.grounding.reasons:
            click.echo(f"(grounding: {reason})", err=True)
    for number, hit in enumerate(answer.citations, start=1):
        pages = ""
        if hit.page_start is not None:
            pages = (
                f", p. {hit.page_start}"
                if hit.page_end in (None, hit.page_start)
                else f", pp. {hit.page_start}–{hit.page_end}"
            )
        click.echo(f"[{number}] {hit.location} § {' > '.join(hit.headers)}{pages}{_where(hit)}")


def _answer_kind(answer: Answer) -> str:
    """The line that says what the answer is."""
    if answer.kind == "generated":
        return f"(generated answer, grounding support {answer.support:.2f})"
    if answer.grounding is None:  # the model said it did not know
        return "(extractive answer: quoted from passage [1]; the model did not answer from it)"
    return "(extractive answer: quoted from passage [1]; the model's reply was not grounded)"


def _summary_kind(hit: Hit) -> str:
    """What a hit's summary is, in a few words: "generated by MODEL" or "extractive"."""
    if hit.summary_kind == "extractive":
        return "extractive, quoted from the chunk"
    return f"generated by {hit.summary_model}" if hit.summary_model else "generated"
