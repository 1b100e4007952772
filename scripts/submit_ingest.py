"""Submit sources to a running Synopsis API as ingest jobs; return once their chunks are searchable.

    uv run python scripts/submit_ingest.py [--api URL] SOURCE...

Files and directories (their `.html`, `.htm`, `.md`, `.markdown`, `.txt`, `.pdf` and
`.docx` files) are uploaded to `POST /documents` (a directory's files named by their path
from the directory's parent, e.g. `tutorial/controlflow.html`), in jobs of at most 50
files and 40 MB (the API's default limits); an `http(s)://` source is sent as a URL.
Each job's progress is followed on `GET /jobs/{id}` and the index on `GET /documents`:
the script returns when every source of every job is listed with its chunks (phase 1
done: searchable by their own text) or the job has ended, while the summaries keep being
written by the server. Exit 1 when a job failed or nothing became searchable in time.

The quick start (scripts/quickstart.sh) uses it. A write key, when the API has keys, comes
from `SYNOPSIS_API_WRITE_KEYS` (the first one).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import httpx

SUFFIXES = {".html", ".htm", ".md", ".markdown", ".txt", ".pdf", ".docx"}
MAX_FILES = 50
MAX_BYTES = 40_000_000
ENDED = {"done", "failed", "cancelled", "interrupted"}


def files_of(source: str) -> list[tuple[str, Path]]:
    """(upload name, path) of every file `source` stands for."""
    path = Path(source).expanduser()
    if path.is_dir():
        base = path.resolve()
        found = sorted(p for p in base.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)
        return [(str(p.relative_to(base.parent)), p) for p in found]
    if path.is_file():
        return [(path.name, path)]
    raise SystemExit(f"{source}: no such file or directory")


def groups(files: list[tuple[str, Path]]) -> list[list[tuple[str, Path]]]:
    """The files in uploads within the API's default limits."""
    parts: list[list[tuple[str, Path]]] = [[]]
    size = 0
    for name, path in files:
        length = path.stat().st_size
        if parts[-1] and (len(parts[-1]) >= MAX_FILES or size + length > MAX_BYTES):
            parts.append([])
            size = 0
        parts[-1].append((name, path))
        size += length
    return [part for part in parts if part]


def submit(client: httpx.Client, sources: list[str]) -> list[dict[str, Any]]:
    """Queue the jobs; return them as the API answered (202)."""
    jobs = []
    urls = [s for s in sources if s.startswith(("http://", "https://"))]
    files = [f for s in sources if s not in urls for f in files_of(s)]
    for url in urls:
        jobs.append(checked(client.post("/documents", json={"url": url})))
    for part in groups(files):
        handles = [path.open("rb") for _, path in part]
        try:
            upload = [
                ("files", (name, handle)) for (name, _), handle in zip(part, handles, strict=True)
            ]
            jobs.append(checked(client.post("/documents", files=upload)))
        finally:
            for handle in handles:
                handle.close()
    return jobs


def checked(response: httpx.Response) -> dict[str, Any]:
    if response.status_code >= 400:
        raise SystemExit(
            f"{response.request.method} {response.request.url.path}: {response.status_code} "
            f"{response.text[:500]}"
        )
    body: dict[str, Any] = response.json()
    return body


def searchable(job: dict[str, Any], indexed: dict[str, int]) -> bool:
    """True once the job's chunks are written (or it ended)."""
    if job["state"] in ENDED:
        return True
    progress = job["progress"]
    if progress.get("stage") == "summarize" or progress.get("summarized", 0) > 0:
        return True  # phase 2 starts once every source's chunks are written
    names = [f["source"] for f in job["request"].get("files", [])]
    return bool(names) and all(indexed.get(name, 0) > 0 for name in names)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="+")
    parser.add_argument("--api", default="http://127.0.0.1:8000", help="the API's address")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds to wait at most")
    args = parser.parse_args()
    keys = [k.strip() for k in os.environ.get("SYNOPSIS_API_WRITE_KEYS", "").split(",")]
    headers = {"Authorization": f"Bearer {keys[0]}"} if keys[0] else {}
    with httpx.Client(base_url=args.api, headers=headers, timeout=120) as client:
        return run(client, args.sources, timeout=args.timeout)


def run(client: httpx.Client, sources: list[str], *, timeout: float, poll: float = 1.0) -> int:
    """Submit `sources`, follow the jobs until their chunks are searchable; the exit status."""
    started = time.monotonic()
    jobs = submit(client, sources)
    for job in jobs:
        address = f"{str(client.base_url).rstrip('/')}/jobs/{job['id']}"
        print(f"job {job['id']} queued: GET {address}", flush=True)
    shown: dict[str, str] = {}
    while True:
        replies = [client.get(f"/jobs/{job['id']}") for job in jobs]
        listing = client.get("/documents")
        # 503: for a moment while the job creates the collections, Weaviate cannot list
        # them yet; the API says to try again, so the next poll does.
        if any(reply.status_code == 503 for reply in [*replies, listing]):
            if time.monotonic() - started > timeout:
                checked_list(listing)  # each raises SystemExit with the reply
                for reply in replies:
                    checked(reply)
            time.sleep(poll)
            continue
        jobs = [checked(reply) for reply in replies]
        listed = checked_list(listing)
        indexed = {item["source"]: int(item["chunks"]) for item in listed}
        for job in jobs:
            line = describe(job)
            if shown.get(job["id"]) != line:
                shown[job["id"]] = line
                elapsed = time.monotonic() - started
                print(f"  {elapsed:5.0f} s  job {job['id'][:8]}: {line}", flush=True)
        if all(searchable(job, indexed) for job in jobs):
            break
        if time.monotonic() - started > timeout:
            print(f"the chunks were not searchable after {timeout:.0f} s", file=sys.stderr)
            return 1
        time.sleep(poll)
    status = 0
    for job in jobs:
        if job["state"] not in ENDED - {"done"}:
            continue
        print(f"job {job['id']} {job['state']}: {job['reason']}", file=sys.stderr)
        names = [f["source"] for f in job["request"].get("files", [])] + job.get("sources", [])
        if not any(indexed.get(name, 0) for name in names):
            status = 1  # nothing of it is searchable
    writing = any(job["state"] not in ENDED for job in jobs)
    behind = "; the API keeps writing their summaries in the job" if writing else ""
    print(f"searchable after {time.monotonic() - started:.0f} s{behind}", flush=True)
    return status


def checked_list(response: httpx.Response) -> list[dict[str, Any]]:
    if response.status_code >= 400:
        raise SystemExit(f"GET /documents: {response.status_code} {response.text[:500]}")
    body: list[dict[str, Any]] = response.json()
    return body


def describe(job: dict[str, Any]) -> str:
    progress = job["progress"]
    parts = [job["state"]]
    if progress.get("chunks"):
        parts.append(
            f"{progress.get('sources_loaded', 0)} sources split, "
            f"{progress.get('written', 0)} of {progress['chunks']} chunks written"
        )
    if progress.get("summaries_total"):
        parts.append(f"{progress.get('summarized', 0)} summaries written")
    return ", ".join(parts)


if __name__ == "__main__":
    sys.exit(main())
