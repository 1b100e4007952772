"""Generate the summaries that eval/summaries/ labels: a fixed sample of chunks per corpus.

    uv run python scripts/sample_summaries.py chunks            # the sample → chunks.jsonl
    uv run python scripts/sample_summaries.py generate MODEL    # first attempts by MODEL
    uv run python scripts/sample_summaries.py retry MODEL       # strict retries (see below)
    uv run python scripts/sample_summaries.py stored CORPUS     # what an index stored

`chunks` loads and splits the three corpora of the question sets the way an ingest does
(`eval/README.md`: the Python tutorial, the MkDocs pages of `eval/mkdocs.sources`, the
Rust book chapters of `eval/rustbook.sources`), and draws `--per-corpus` chunks of each
with a fixed seed. Each is written with its id, content hash, header path, title and
text, so the labels can be read and checked without the corpora.

`generate` summarizes each sampled chunk once with the chat model MODEL on the
configured Ollama, as an ingest does with the guard off (prompt v2, the same cleaning
and limits): the *first attempt* the guard would judge. `retry` writes the guard's
strict retry for each first attempt that the current guard (`validate_summary`, with
the faithfulness check) flags, so that what the guard would store can be labeled too.
Both append to `summaries.jsonl` and skip what is there already; labels are added by
hand afterwards (`label`, `note`). Heavy: run under the machine's CPU lock.

`stored` reads back what an ingest stored for the sampled chunks of CORPUS, from the
index of `SYNOPSIS_COLLECTION_PREFIX` (the summary, its kind, model and recorded
reason), and appends it to `stored.jsonl` with `--guard` naming the guard of that
ingest. A stored summary that is, word for word, a labeled one of the same chunk and
model in `summaries.jsonl` (temperature 0 gives the same first attempt) takes its label;
the rest are labeled by hand. Light: no model is called.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

from weaviate.classes.query import Filter

from loaders import load
from loaders.documents import SOURCE, TITLE
from service.connections import connect_weaviate, ensure_stack
from service.index.identity import chunk_id
from service.ingest.chunk_records import chunk_hash, chunk_headers
from service.ingest.quality import QualityThresholds, validate_summary
from service.ingest.summarize import Summarizer, SummaryRequest, clean_for_prompt
from service.models.chat import chat_model
from service.settings import Settings
from splitters import chunk_documents

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "eval" / "summaries"
CHUNKS = OUT / "chunks.jsonl"
SUMMARIES = OUT / "summaries.jsonl"
STORED = OUT / "stored.jsonl"
TUTORIAL = "/usr/share/doc/python3.11/html/tutorial/"
SEED = 23


def corpora() -> dict[str, list[str]]:
    """The sources of each corpus, as its question set's README names them."""

    def listed(name: str) -> list[str]:
        text = (ROOT / "eval" / f"{name}.sources").read_text(encoding="utf-8")
        return [line.strip() for line in text.splitlines() if line.strip()]

    return {"tutorial": [TUTORIAL], "mkdocs": listed("mkdocs"), "rustbook": listed("rustbook")}


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def append_jsonl(path: Path, record: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(record, ensure_ascii=False) + "\n")


def sample_chunks(settings: Settings, per_corpus: int) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    for corpus, sources in corpora().items():
        chunks = list(chunk_documents(load(sources), max_tokens=settings.ingest.max_tokens))
        unique: dict[str, Any] = {}
        for chunk in chunks:
            source = str(chunk.metadata[SOURCE])
            digest = chunk_hash(chunk)
            unique.setdefault(str(chunk_id(source, digest)), (chunk, digest))
        drawn = random.Random(f"{SEED}:{corpus}").sample(sorted(unique), per_corpus)
        print(f"{corpus}: {len(unique)} chunks, {per_corpus} drawn", file=sys.stderr)
        for cid in sorted(drawn, key=list(unique).index):  # document order
            chunk, digest = unique[cid]
            rows.append(
                {
                    "corpus": corpus,
                    "chunk_id": cid,
                    "content_hash": digest,
                    "source": str(chunk.metadata[SOURCE]),
                    "title": str(chunk.metadata.get(TITLE) or ""),
                    "headers": chunk_headers(chunk),
                    "content": chunk.page_content,
                }
            )
    CHUNKS.write_text(
        "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8"
    )


def _request(row: dict[str, Any]) -> SummaryRequest:
    return SummaryRequest(
        headers=row["headers"],
        content=row["content"],
        label=f"{row['source']} § {' > '.join(row['headers'])}",
        title=row["title"],
    )


def generate(settings: Settings, model: str, *, strict: bool) -> None:
    settings = settings.with_overrides(chat_model=model)
    ensure_stack(settings)
    summarizer = Summarizer(
        chat_model(settings), model_name=model, timeout=settings.summaries.timeout
    )
    thresholds = QualityThresholds.from_settings(settings)
    chunks = {row["chunk_id"]: row for row in read_jsonl(CHUNKS)}
    existing = read_jsonl(SUMMARIES)
    attempt = "strict" if strict else "first"
    done = {(r["chunk_id"], r["model"], r["attempt"]) for r in existing}
    todo = [cid for cid in chunks if (cid, model, attempt) not in done]
    if strict:  # only where the guard flags the first attempt
        firsts = {
            r["chunk_id"]: r for r in existing if r["model"] == model and r["attempt"] == "first"
        }
        todo = [
            cid
            for cid in todo
            if cid in firsts
            and validate_summary(
                firsts[cid]["summary"],
                clean_for_prompt(chunks[cid]["content"]),
                chunks[cid]["headers"],
                thresholds,
                title=chunks[cid]["title"],
            )
        ]

    async def run() -> None:
        # One call at a time, so that the seconds recorded are one summary's.
        for number, cid in enumerate(todo, start=1):
            row = chunks[cid]
            started = time.perf_counter()
            # As under the guard: an empty reply is kept (the guard judges it).
            summary = await summarizer.asummarize(_request(row), strict=strict, accept_empty=True)
            seconds = time.perf_counter() - started
            append_jsonl(
                SUMMARIES,
                {
                    "chunk_id": cid,
                    "corpus": row["corpus"],
                    "model": model,
                    "prompt_version": summarizer.prompt_version,
                    "attempt": attempt,
                    "seconds": round(seconds, 2),
                    "summary": summary,
                    "label": None,
                    "note": "",
                },
            )
            print(f"{number}/{len(todo)} {row['corpus']} {seconds:.1f} s", file=sys.stderr)

    try:
        asyncio.run(run())
    finally:
        summarizer.close()


def stored(settings: Settings, corpus: str, guard: str) -> None:
    """Append what the index of `settings.external.collection_prefix` holds for the sampled chunks
    of `corpus` to stored.jsonl (labels carried over where the text is a labeled one's)."""
    index = settings.external.collection_prefix
    sampled = [row["chunk_id"] for row in read_jsonl(CHUNKS) if row["corpus"] == corpus]
    kept = {(r["chunk_id"], r["index"]) for r in read_jsonl(STORED)}
    labeled = {
        (r["chunk_id"], r["model"], r["summary"]): r
        for r in read_jsonl(SUMMARIES)
        if r.get("label")
    }
    client = connect_weaviate(settings)
    try:
        summaries = client.collections.use(f"{index}SummarizedDocuments")
        found = summaries.query.fetch_objects(
            filters=Filter.by_property("original_id").contains_any(sampled),
            limit=len(sampled) * 2,
            return_properties=[
                "summary",
                "original_id",
                "kind",
                "model",
                "prompt_version",
                "reason",
            ],
        )
    finally:
        client.close()
    by_chunk = {str(obj.properties["original_id"]): obj.properties for obj in found.objects}
    missing = [cid for cid in sampled if cid not in by_chunk]
    carried = 0
    for cid in sampled:
        props = by_chunk.get(cid)
        if props is None or (cid, index) in kept:
            continue
        kind = str(props.get("kind") or "llm")
        model = str(props.get("model") or "")
        text = str(props.get("summary") or "")
        known = labeled.get((cid, model, text)) if kind == "llm" else None
        carried += known is not None
        append_jsonl(
            STORED,
            {
                "chunk_id": cid,
                "corpus": corpus,
                "model": model,
                "prompt_version": str(props.get("prompt_version") or ""),
                "index": index,
                "guard": guard,
                "kind": kind,
                "reason": str(props.get("reason") or ""),
                "summary": text,
                "label": known["label"] if known else None,
                "note": known["note"] if known else "",
            },
        )
    print(
        f"{corpus} in {index}: {len(sampled) - len(missing)} of {len(sampled)} sampled chunks "
        f"have a summary; {carried} labels carried over",
        file=sys.stderr,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    sample = commands.add_parser("chunks", help="draw the sample of chunks")
    sample.add_argument("--per-corpus", type=int, default=34)
    for name in ("generate", "retry"):
        command = commands.add_parser(name)
        command.add_argument("model", help="Ollama chat model name")
    read_back = commands.add_parser("stored", help="read back what an index stored")
    read_back.add_argument("corpus", choices=sorted(corpora()))
    read_back.add_argument("--guard", required=True, help="the guard of that ingest, in words")
    args = parser.parse_args()
    settings = Settings.from_env()
    if args.command == "chunks":
        sample_chunks(settings, args.per_corpus)
    elif args.command == "stored":
        stored(settings, args.corpus, args.guard)
    else:
        generate(settings, args.model, strict=args.command == "retry")


if __name__ == "__main__":
    main()
