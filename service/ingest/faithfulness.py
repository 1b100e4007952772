"""Does a summary say only what its chunk says? What it asserts without support, scored.

Small models invent: a date and a university in a summary of a tutorial's introduction,
`xrange()` in a section on `range()`. The guard's other detectors (quality.py) look at
form; this one reads a summary's content against its *reference*: the chunk as the model
saw it, its header path and its document's title. Two measures come out of it
(`check_faithfulness`):

- **claims**: the numbers (dates and versions included), URLs, proper names and code
  identifiers of the summary that the reference does not contain. Each is a specific
  statement a reader would take as fact, so one of them is strong evidence.
- **score**: the share of the summary's content units (its content words and claims)
  that the reference does not contain: how much of it is new. Paraphrase brings some new
  words; a summary about something else is mostly new.

Everything is compared after normalising case, inflection (a light suffix stripper:
"loops", "looping" and "looped" meet) and code spelling (`range()` meets "range",
`os.path.join` meets "os.path.join", `my_function` meets "my function" and `myFunction`).
Function words and the words a summary uses to talk about a text ("explains",
"section", "example") never count. `detect_invented` flags a summary with at least
`max_invented_claims` claims or a score above `max_unsupported_share`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from service.index.identifiers import extract_identifiers

__all__ = [
    "CLAIM_KINDS",
    "Claim",
    "FaithfulnessCheck",
    "Reference",
    "check_faithfulness",
    "normalize_word",
]

#: The kinds of claim, in the order a check lists them.
CLAIM_KINDS = ("number", "url", "identifier", "name")


@dataclass(frozen=True)
class Claim:
    """One specific thing a summary asserts that its reference does not contain."""

    kind: str  # one of CLAIM_KINDS
    text: str  # as the summary spells it


@dataclass(frozen=True, kw_only=True)
class FaithfulnessCheck:
    """What a summary asserts without support in its chunk, header path and title."""

    claims: tuple[Claim, ...]  # unsupported numbers, URLs, identifiers, names
    words: tuple[str, ...]  # unsupported content words (lower case, as written)
    units: int  # the summary's content units: content words, numbers, URLs, identifiers

    @property
    def score(self) -> float:
        """Share of the summary's content units that the reference does not contain."""
        unsupported = len(self.words) + len(self.claims)
        return min(1.0, unsupported / self.units) if self.units else 0.0


# -- normalisation ----------------------------------------------------------------------

_DOUBLED = re.compile(r"([b-df-hj-kmnp-rtv-y])\1$")  # not l, s, z: "installing", "passed"


def normalize_word(word: str) -> str:
    """Lower case without inflection: "Loops", "looping", "looped" → "loop".

    A light suffix stripper, not a real stemmer: what matters is that a word and its
    inflections meet, and the same function runs on both sides of every comparison.
    """
    w = word.lower().replace("’", "'")
    w = w.removesuffix("'s").removesuffix("'")
    if len(w) <= 3 or not w.isalpha():
        return w
    for suffix, replacement in (
        ("ies", "y"),
        ("ied", "y"),
        ("sses", "ss"),
        ("xes", "x"),
        ("ches", "ch"),
        ("shes", "sh"),
        ("ings", ""),
        ("ing", ""),
        ("ed", ""),
        ("es", "e"),
        ("s", ""),
    ):
        stem = w[: -len(suffix)]
        if w.endswith(suffix) and len(stem) >= 3 and not w.endswith(("ss", "us", "is")):
            w = stem + replacement
            if suffix in ("ing", "ings", "ed") and _DOUBLED.search(w):
                w = w[:-1]  # "running" → "run", "mapped" → "map"
            break
    for suffix in ("ation", "ly", "er", "e"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 4:
            w = w[: -len(suffix)] + ("at" if suffix == "ation" else "")
            break
    return w


def _compact(text: str) -> str:
    """Code spelling removed: `os.path.join()` → "ospathjoin", "My_Class" → "myclass"."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def _parts(name: str) -> list[str]:
    """The words of a code name: "os.path.join" → os, path, join; "myFunc" → my, func."""
    return [
        part.lower() for piece in re.split(r"[^A-Za-z0-9]+", name) for part in _CAMEL.findall(piece)
    ]


# -- what the reference supports --------------------------------------------------------

_TOKEN = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)?")
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:[.,:/-]\d+)*(?:st|nd|rd|th|s)?%?(?![\w])")
_URL = re.compile(
    r"\b(?:https?://|www\.)[^\s<>()\"'`]+"
    r"|\b[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.(?:com|org|net|io|dev|edu|gov|info|co|rs)\b",
    re.IGNORECASE,
)
_FILE = re.compile(
    r"(?<![\w/.])[\w.-]*\w\.(?:py|pyc|pyw|yml|yaml|toml|md|html?|css|js|json|txt|cfg|ini|rs|"
    r"lock|sh|bat|exe|csv|xml)\b",
    re.IGNORECASE,
)
_OPTION = re.compile(r"(?<![\w-])--?[a-z][a-z0-9]*(?:-[a-z0-9]+)*\b")
_SNAKE_OR_CAMEL = re.compile(r"\b(?:[A-Za-z]\w*_\w+|[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*)\b")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
# A list item's number ("1. ", "2) " at the start of a line) orders the list; it asserts nothing.
_LIST_NUMBER = re.compile(r"^[ \t]*\d{1,2}[.)](?=\s)", re.M)


class Reference:
    """What a summary may rest on: the chunk, its header path and its title, normalised."""

    def __init__(self, chunk_text: str, headers: Sequence[str] = (), title: str = "") -> None:
        text = "\n".join([*headers, title, chunk_text])
        self.text = text.lower()
        tokens = _TOKEN.findall(text)
        self.words = {normalize_word(token) for token in tokens}
        self.compact = {_compact(token) for token in tokens}
        lowered = [token.lower() for token in tokens]
        for n in (2, 3):  # "built in" meets `builtin`, "my empty class" `MyEmptyClass`
            self.compact.update("".join(lowered[i : i + n]) for i in range(len(lowered) - n + 1))
        for name in re.findall(r"[A-Za-z_][\w.]*\w", text):
            self.compact.add(_compact(name))
            self.words.update(normalize_word(part) for part in _parts(name))
        self.numbers = set()
        for number in _NUMBER.findall(text):
            value = _number_value(number)
            self.numbers.add(value)
            self.numbers.update(re.split(r"[.:/-]", value))  # "3.11" supports "3" and "11"
        self.urls = {_url_key(url) for url in _URL.findall(text)}

    def has_word(self, word: str) -> bool:
        """True when `word` (any case or inflection, any code spelling) is in the reference."""
        return normalize_word(word) in self.words or _compact(word) in self.compact

    def has_name(self, name: str) -> bool:
        """True when the code name is there whole, or each of its words is."""
        if _compact(name) in self.compact:
            return True
        parts = _parts(name)
        return bool(parts) and all(self.has_word(part) for part in parts)

    def has_number(self, number: str) -> bool:
        """True when the number (date, version) is there as written, separators aside."""
        return _number_value(number) in self.numbers

    def has_url(self, url: str) -> bool:
        """True when the URL (without scheme, `www.` and trailing slash) is in the text."""
        key = _url_key(url)
        return key in self.urls or key in self.text


def _number_value(number: str) -> str:
    value = number.lower().lstrip("+").rstrip("%")
    value = re.sub(r"(?<=\d)(?:st|nd|rd|th|s)$", "", value)
    value = re.sub(r"(?<=\d),(?=\d{3}\b)", "", value)  # 1,000 → 1000
    return value.rstrip(".,:/-")


def _url_key(url: str) -> str:
    key = re.sub(r"^(?:https?://)?(?:www\.)?", "", url.lower())
    return key.rstrip("/.,;:")


# -- what a summary asserts -------------------------------------------------------------

# Function words, and the words a summary uses to talk about a text or a program in
# general: they assert nothing about this chunk.
_NEUTRAL_TEXT = """
    a about above across after again against all along also although always among an
    and another any anything are aren't around as at away back be because become been
    before being below besides between beyond both but by can cannot can't could did
    didn't do does doesn't doing done don't down during each either else enough etc even
    ever every everything few first for from further get gets getting give given gives
    go goes going had has have having he her here hers herself him himself his how
    however i if in including instead into is isn't it it's its itself just keep last
    least less let like made make makes making many may me might more most much must my
    near need needed needs neither new next no nor not nothing now of off often on once
    one only onto or other others otherwise our out over own per perhaps rather same
    several shall she should since so some something sometimes still such than that the
    their theirs them themselves then there therefore these they thing things this those
    though through thus to together too toward towards two three four five six seven
    eight nine ten under unless until up upon us use used uses using usually various
    very via was wasn't way ways we well were what whatever when where whether which
    while who whom whose why will with within without would yet you your yours
    also able allow allows allowed kind kinds lot lots part parts set sets type
    section sections chapter chapters page pages text document documentation tutorial
    guide manual reader readers user users article topic topics overview introduction
    summary summarize summarizes explain explains explained explaining explanation
    describe describes described describing description discuss discusses discussed
    discussion cover covers covered covering show shows shown showing provide provides
    provided providing present presents presented demonstrate demonstrates demonstrated
    illustrate illustrates illustrated introduce introduces introduced mention mentions
    mentioned outline outlines detail details detailed focus focuses highlight
    highlights learn learns learning understand understanding important importance
    example examples instance instances concept concepts information specific
    specifically different various useful basic basics simple key main common general
    including include includes included how-to step steps way
    code program programs programming developer developers option options feature
    features functionality capability capabilities purpose approach scenario scenarios
    work works working handle handles handling behavior behaviour available existing
    help helps ensure ensures clear clearly concise comprehensive easy easier easily
    friendly user-friendly particularly especially essential crucial solid foundation
    instructions guidance determine based
"""
_NEUTRAL = frozenset(normalize_word(word) for word in _NEUTRAL_TEXT.split())
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s|\n)[\s\"'“‘(*\-#>]*$")


@dataclass(frozen=True)
class _Span:
    kind: str
    text: str
    start: int
    end: int


def _spans(summary: str) -> list[_Span]:
    """The summary's numbers, URLs and code names, each once, leftmost first."""
    found: list[_Span] = []
    taken: list[tuple[int, int]] = []

    def add(kind: str, matches: Iterable[re.Match[str]], group: int = 0) -> None:
        for match in matches:
            start, end = match.span(group)
            if any(start < right and left < end for left, right in taken):
                continue
            taken.append((start, end))
            found.append(_Span(kind, match.group(group), start, end))

    for match in _LIST_NUMBER.finditer(summary):
        taken.append(match.span())
    add("url", _URL.finditer(summary))
    add("identifier", _CODE_SPAN.finditer(summary), 1)
    add("identifier", _FILE.finditer(summary))
    add("identifier", _OPTION.finditer(summary))
    names = set(extract_identifiers(summary))
    add(
        "identifier",
        (
            m
            for m in re.finditer(r"[A-Za-z_][\w.]*\w(?:\(\))?", summary)
            if m.group(0).rstrip("()") in names
        ),
    )
    add("identifier", _SNAKE_OR_CAMEL.finditer(summary))
    add("number", _NUMBER.finditer(summary))
    return sorted(found, key=lambda span: span.start)


def _code_claim_supported(text: str, reference: Reference) -> bool:
    """A code span: a name, a call, or a short snippet whose names must all be there."""
    names = re.findall(r"[A-Za-z_][\w.]*", text)
    if not names:
        return True  # punctuation or an operator: nothing named
    return all(reference.has_name(name) for name in names if len(name) > 1)


def check_faithfulness(
    summary: str, chunk_text: str, headers: Sequence[str] = (), title: str = ""
) -> FaithfulnessCheck:
    """What `summary` asserts that `chunk_text` (as the model saw it), `headers` and
    `title` do not contain: unsupported claims and content words, and their share."""
    reference = Reference(chunk_text, headers, title)
    claims: list[Claim] = []
    units = 0
    masked = list(summary)
    for span in _spans(summary):
        masked[span.start : span.end] = " " * (span.end - span.start)
        units += 1
        if span.kind == "url":
            supported = reference.has_url(span.text)
        elif span.kind == "number":
            supported = reference.has_number(span.text)
        else:
            supported = _code_claim_supported(span.text, reference)
        if not supported:
            claims.append(Claim(span.kind, span.text.strip()))
    rest = "".join(masked)
    words: list[str] = []
    seen: set[str] = set()
    name_tokens: list[tuple[int, str]] = []
    for match in _TOKEN.finditer(rest):
        token = match.group(0)
        norm = normalize_word(token)
        if norm in _NEUTRAL or len(norm) < 3 or token.isdigit():
            continue
        if _is_name(token, rest, match.start()):
            name_tokens.append((match.start(), token))
            continue
        if norm in seen:
            continue
        seen.add(norm)
        units += 1
        if not reference.has_word(token):
            words.append(token.lower())
    for name in _group_names(name_tokens, rest):
        units += 1
        if not all(
            reference.has_word(token) for token in name.split() if token.lower() not in _NEUTRAL
        ):
            claims.append(Claim("name", name))
    claims.sort(key=lambda claim: CLAIM_KINDS.index(claim.kind))
    return FaithfulnessCheck(claims=tuple(claims), words=tuple(words), units=units)


def _is_name(token: str, text: str, start: int) -> bool:
    """A capitalised word that is not there only because it starts a sentence; acronyms
    and CamelCase words ("WASP", "MkDocs") anywhere."""
    if not token[0].isupper():
        return False
    if len(token) > 1 and (token.isupper() or any(c.isupper() for c in token[1:])):
        return True
    return not _SENTENCE_START.search(text[:start])


def _group_names(tokens: list[tuple[int, str]], text: str) -> list[str]:
    """Adjacent capitalised words as one name ("University of California"), each once."""
    groups: list[list[tuple[int, str]]] = []
    for start, token in tokens:
        if groups:
            last_start, last = groups[-1][-1]
            between = text[last_start + len(last) : start]
            if re.fullmatch(r"\s+(?:of\s+|de\s+|for\s+|and\s+)?", between):
                groups[-1].append((start, token))
                continue
        groups.append([(start, token)])
    names: dict[str, None] = {}
    for group in groups:
        first, (last_start, last) = group[0], group[-1]
        names.setdefault(text[first[0] : last_start + len(last)], None)
    return list(names)
