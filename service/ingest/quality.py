"""Is a summary usable? Detectors for degenerate summaries, and the extractive fallback.

Small local models often write summaries that hurt retrieval: they copy the chunk's
first lines, repeat a sentence, echo the prompt's scaffolding ("Header 3: …"), describe
something else entirely, or state what the chunk does not say (`detect_invented`, with
service/ingest/faithfulness.py). Each detector below is a small function that returns
a reason (a short, stable name stored with the summary) or None; `validate_summary`
runs them all. `extractive_summary` builds the fallback stored for a flagged summary:
header path + lead sentence(s) + identifiers.

Every detector takes the chunk *as the model saw it* (`clean_for_prompt`), so link
targets and HTML do not count as text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from service.index.identifiers import extract_identifiers
from service.index.records import header_path
from service.ingest.faithfulness import check_faithfulness
from service.settings import Settings
from splitters.base.markdown_syntax import iter_segments

__all__ = [
    "REASONS",
    "QualityThresholds",
    "detect_drift",
    "detect_invented",
    "detect_length",
    "detect_repetition",
    "detect_scaffolding",
    "detect_verbatim",
    "extractive_summary",
    "salient_terms",
    "validate_summary",
]

#: Every reason a detector can return, in the order `validate_summary` reports them.
REASONS = ("empty", "too_long", "scaffolding", "verbatim", "repetition", "drift", "invented")

#: Word n-gram size for the verbatim-copy test: 8 words in a row rarely match by chance.
COPY_NGRAM = 8
#: Word n-gram size for the self-repetition test.
REPEAT_NGRAM = 5


@dataclass(frozen=True, kw_only=True)
class QualityThresholds:
    """When a summary is flagged. `from_settings` reads the `summary_*` settings."""

    min_words: int = 4  # fewer words: "empty"
    max_words: int = 100  # more words: "too_long" (the prompt asks for ≤ 3 sentences)
    max_copied_share: float = 0.5  # share of the summary's words in 8+-word copied spans
    max_repeated_share: float = 0.2  # share of the summary's 5-grams that are repeats
    min_shared_terms: int = 1  # salient chunk terms the summary must mention
    # "invented": this many claims (numbers, URLs, names, code identifiers) that the chunk,
    # its header path and title do not contain, or more than this share of new content
    # (faithfulness.py); 0 switches the measure off.
    max_invented_claims: int = 1
    max_unsupported_share: float = 0.15

    @classmethod
    def from_settings(cls, settings: Settings) -> QualityThresholds:
        """The thresholds configured by `SYNOPSIS_SUMMARY_*`."""
        return cls(
            min_words=settings.guard.min_words,
            max_words=settings.guard.max_words,
            max_copied_share=settings.guard.max_copied_share,
            max_repeated_share=settings.guard.max_repeated_share,
            min_shared_terms=settings.guard.min_shared_terms,
            max_invented_claims=settings.guard.max_invented_claims,
            max_unsupported_share=settings.guard.max_unsupported_share,
        )


_WORD = re.compile(r"[A-Za-z0-9_]+(?:['’][a-z]+)?")
_TERM = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SENTENCE_END = re.compile(r"(?<!e\.g\.)(?<!i\.e\.)(?<=[.!?])\s+")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_BULLET = re.compile(r"^(?:[-*+]|\d+[.)])\s+")
_CODE_DEFINITION = re.compile(r"^\s*(?:>>>\s*|\.\.\.\s*)?(?:async\s+)?(?:def|class)\s+(\w+)", re.M)
_SCAFFOLDING = re.compile(
    r"(?:^|\n)\s*(?:#+\s*)?(?:header\s*\d|section|topic|summary|title)\s*:"
    r"|here(?:'s| is) (?:a |the |my )?(?:concise |short |brief )?summary"
    r"|summary of (?:this|the) section"
    r"|<\|im_(?:start|end)\|>",
    re.IGNORECASE,
)

# English function words and words every documentation section uses: sharing only these
# with a chunk says nothing about being on topic ("4.5. pass Statements" → "pass").
_STOPWORD_TEXT = """
    a about above after again all also an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from
    further had has have having here how if in into is it its itself just more most no nor
    not now of off on once only or other our out over own same she should so some such than
    that the their them then there these they this those through to too under until up very
    was we were what when where which while who whom why will with would you your
    section sections chapter statement statements function functions clause clauses
    example examples using use used introduction overview tools python
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def _words(text: str) -> list[str]:
    return [word.lower() for word in _WORD.findall(text)]


def _ngrams(words: Sequence[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]


def _stem(word: str) -> str:
    """Plural-insensitive matching without a stemmer: "loops" meets "loop"."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


# -- detectors --------------------------------------------------------------------------


def detect_length(summary: str, thresholds: QualityThresholds) -> str | None:
    """Flag "empty" below `min_words`, "too_long" above `max_words`."""
    count = len(_words(summary))
    if count < thresholds.min_words:
        return "empty"
    if count > thresholds.max_words:
        return "too_long"
    return None


def detect_scaffolding(summary: str) -> str | None:
    """Flag "scaffolding" when the summary echoes prompt structure ("Header 3:", "Section:")."""
    return "scaffolding" if _SCAFFOLDING.search(summary) else None


def copied_share(summary: str, chunk_text: str, n: int = COPY_NGRAM) -> float:
    """Share of the summary's words that lie in a span of `n`+ words copied from the chunk.

    Word coverage rather than the share of copied n-grams: a summary that pastes two
    sentences around a label of its own is still mostly copy.
    """
    words = _words(summary)
    if len(words) < n:
        return 0.0
    source = set(_ngrams(_words(chunk_text), n))
    covered = [False] * len(words)
    for start, gram in enumerate(_ngrams(words, n)):
        if gram in source:
            covered[start : start + n] = [True] * n
    return sum(covered) / len(words)


def detect_verbatim(summary: str, chunk_text: str, thresholds: QualityThresholds) -> str | None:
    """Flag "verbatim" when more than `max_copied_share` of the words are copied spans."""
    return "verbatim" if copied_share(summary, chunk_text) > thresholds.max_copied_share else None


def repeated_share(summary: str, n: int = REPEAT_NGRAM) -> float:
    """Share of the summary's word n-grams that repeat an earlier one."""
    grams = _ngrams(_words(summary), n)
    if not grams:
        return 0.0
    return 1 - len(set(grams)) / len(grams)


def detect_repetition(summary: str, thresholds: QualityThresholds) -> str | None:
    """Flag "repetition" when a sentence recurs or too many 5-grams are repeats."""
    sentences = [" ".join(_words(s)) for s in _SENTENCE_END.split(summary.strip())]
    sentences = [s for s in sentences if len(s.split()) >= 3]
    if len(sentences) != len(set(sentences)):
        return "repetition"
    if repeated_share(summary) > thresholds.max_repeated_share:
        return "repetition"
    return None


def salient_terms(chunk_text: str, headers: Sequence[str]) -> set[str]:
    """What a summary of this chunk should mention (lower case, plural-insensitive).

    The words of the chunk's own (last) header minus stop and generic words, the
    identifiers it names (`extract_identifiers`, dotted names also by their last part),
    and the functions and classes its code defines.
    """
    words: set[str] = set()
    names: list[str] = list(_CODE_DEFINITION.findall(chunk_text))
    if headers:
        words.update(
            word.lower()
            for word in _TERM.findall(headers[-1])
            if len(word) > 2 and word.lower() not in _STOPWORDS
        )
        names += extract_identifiers(headers[-1])
    # Identifiers stay even when they are English words: `if`, `for`, `in` are the topic.
    for name in [*names, *extract_identifiers(chunk_text)]:
        words.add(name.lower())
        words.add(name.rsplit(".", 1)[-1].lower())
    return {_stem(term) for term in words}


def detect_drift(
    summary: str, chunk_text: str, headers: Sequence[str], thresholds: QualityThresholds
) -> str | None:
    """Flag "drift" when the summary shares fewer than `min_shared_terms` salient terms.

    A chunk with no salient terms at all cannot drift.
    """
    wanted = salient_terms(chunk_text, headers)
    if not wanted:
        return None
    mentioned = {_stem(word.lower()) for word in _TERM.findall(summary)}
    for name in extract_identifiers(summary):
        mentioned.add(name.lower())
    shared = wanted & mentioned
    return "drift" if len(shared) < min(thresholds.min_shared_terms, len(wanted)) else None


def detect_invented(
    summary: str,
    chunk_text: str,
    headers: Sequence[str],
    thresholds: QualityThresholds,
    *,
    title: str = "",
) -> str | None:
    """Flag "invented" when the summary asserts what its chunk, header path and title do
    not support: at least `max_invented_claims` unsupported claims, or a share of new
    content above `max_unsupported_share` (`check_faithfulness`)."""
    check = check_faithfulness(summary, chunk_text, headers, title)
    too_many = 0 < thresholds.max_invented_claims <= len(check.claims)
    too_new = 0 < thresholds.max_unsupported_share < check.score
    return "invented" if too_many or too_new else None


def validate_summary(
    summary: str,
    chunk_text: str,
    headers: Sequence[str],
    thresholds: QualityThresholds | None = None,
    *,
    title: str = "",
) -> list[str]:
    """Every reason to reject `summary` of `chunk_text` (empty list: it is fine).

    `chunk_text` is the chunk as the model saw it (`clean_for_prompt`); `title` is its
    document's, which a summary may name.
    """
    limits = thresholds or QualityThresholds()
    length = detect_length(summary, limits)
    if length == "empty":
        return ["empty"]  # nothing else is meaningful on a handful of words
    found = [
        length,
        detect_scaffolding(summary),
        detect_verbatim(summary, chunk_text, limits),
        detect_repetition(summary, limits),
        detect_drift(summary, chunk_text, headers, limits),
        detect_invented(summary, chunk_text, headers, limits, title=title),
    ]
    return [reason for reason in found if reason is not None]


# -- the fallback -----------------------------------------------------------------------


def lead_sentences(chunk_text: str, *, min_words: int = 12, max_sentences: int = 2) -> str:
    """The chunk's first prose sentence(s): code, doctest lines and "For example:" skipped."""
    chosen: list[str] = []
    prose = "".join("\n\n" if s.is_code else s.text for s in iter_segments(chunk_text))
    for paragraph in _PARAGRAPH_BREAK.split(prose):
        lines = [
            _BULLET.sub("", line.strip())
            for line in paragraph.splitlines()
            if line.strip() and not line.lstrip().startswith((">>>", "...", "|", "#"))
        ]
        for sentence in _SENTENCE_END.split(" ".join(" ".join(lines).split())):
            if not sentence or sentence.endswith(":"):  # it announces code that is not here
                continue
            chosen.append(sentence)
            if len(" ".join(chosen).split()) >= min_words or len(chosen) >= max_sentences:
                return " ".join(chosen)
    return " ".join(chosen)


def chunk_identifiers(chunk_text: str, *, limit: int = 12) -> list[str]:
    """Names the chunk defines (def/class in its code) or uses, definitions first."""
    names = dict.fromkeys(_CODE_DEFINITION.findall(chunk_text))
    names.update(dict.fromkeys(extract_identifiers(chunk_text)))
    return list(names)[:limit]


def extractive_summary(chunk_text: str, headers: Sequence[str]) -> str:
    """The fallback: header path, the chunk's lead sentence(s), the identifiers it covers."""
    parts = [header_path(headers)] if headers else []
    lead = lead_sentences(chunk_text)
    if lead:
        parts.append(lead)
    names = chunk_identifiers(chunk_text)
    if names:
        parts.append("Identifiers: " + ", ".join(names) + ".")
    return "\n".join(parts)
