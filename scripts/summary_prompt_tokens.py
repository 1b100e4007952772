"""Prompt tokens per chunk before and after prompt hygiene, over the Python 3.11 tutorial.

No LLM is called: every tutorial page is loaded and chunked as the ingest does, and for
each chunk the cl100k_base tokens of (a) the raw chunk with its header path in the old
"Section: A > B" form and (b) the v2 prompt body ("Topic: A › B" + `clean_for_prompt`)
are counted. The system prompt is the same size for both and left out.

    uv run python scripts/summary_prompt_tokens.py [/usr/share/doc/python3.11/html/tutorial]
"""

from __future__ import annotations

import sys
from pathlib import Path

from loaders import load
from service.ingest.summarize import clean_for_prompt
from splitters import chunk_documents
from splitters.encoding import count_tokens


def main(root: str) -> None:
    """Print chunk count and token totals, raw vs cleaned."""
    pages = sorted(str(path) for path in Path(root).glob("*.html"))
    chunks = list(chunk_documents(load(pages), max_tokens=500))
    raw = cleaned = 0
    worst: tuple[float, int, int, str] = (0.0, 0, 0, "")
    for chunk in chunks:
        headers = list(chunk.metadata.get("headers") or [])
        before = count_tokens(f"Section: {' > '.join(headers)}\n\n{chunk.page_content}")
        after = count_tokens(
            f"Topic: {' › '.join(headers)}\n\n{clean_for_prompt(chunk.page_content)}"
        )
        raw += before
        cleaned += after
        saved = 1 - after / before
        if saved > worst[0]:
            worst = (saved, before, after, " > ".join(headers))
    print(f"{len(pages)} pages, {len(chunks)} chunks")
    print(
        f"prompt body tokens (cl100k_base): raw {raw}, cleaned {cleaned}, "
        f"reduction {1 - cleaned / raw:.1%} ({(raw - cleaned) / len(chunks):.0f} per chunk)"
    )
    print(f"largest reduction: {worst[0]:.1%} ({worst[1]} → {worst[2]} tokens) in {worst[3]}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/usr/share/doc/python3.11/html/tutorial")
