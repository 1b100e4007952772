"""What the chat model is asked for a summary: the system prompts, by version, and the
messages built for one chunk.

A prompt version names one system prompt (`PROMPTS`); `STRICT_SYSTEM_PROMPT` is the
guard's retry (`service.ingest.summarize`). The chunk arrives cleaned
(`service.ingest.summarize.clean_for_prompt`) after its header path, given once as
"Topic: A › B".
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import HumanMessage, SystemMessage

from service.ingest.quality import chunk_identifiers

__all__ = [
    "PROMPTS",
    "PROMPT_VERSION",
    "QUESTIONS_SYSTEM_PROMPT",
    "RETRIEVAL_SYSTEM_PROMPT",
    "STRICT_SYSTEM_PROMPT",
    "SUMMARY_QUESTIONS_SYSTEM_PROMPT",
    "SYSTEM_PROMPT",
    "prompt_messages",
]

#: The default prompt's version (`Settings.summaries.prompt_version` names one of `PROMPTS`).
#: Bump when a system prompt changes.
PROMPT_VERSION = "v2"

SYSTEM_PROMPT = (
    "You summarize one section of technical documentation for a search index. "
    "Write one short paragraph (at most three sentences) that says what the section "
    "explains and names the functions, statements, classes or options it covers. "
    "Use the section title's words. No preamble, no list, no heading."
)

#: Written for what a reader searches for: the task the section helps with, in a
#: reader's words, then the names it covers (docs/eval.md compares it with v2).
RETRIEVAL_SYSTEM_PROMPT = (
    "You write search keys for one section of technical documentation. In at most three "
    "sentences, say what a reader can do with this section, as a reader would ask it "
    "(for example: how to change a default, why an error appears), and name the "
    "functions, statements, classes or options it covers. No preamble, no list, no heading."
)

#: doc2query-style: the questions the section answers, in a reader's words, which is what
#: the field measured to help keyword and vector search when the model is capable
#: (docs/eval.md compares it with v2).
QUESTIONS_SYSTEM_PROMPT = (
    "You write the questions that one section of technical documentation answers, for a "
    "search index. Write three or four questions that a reader would ask and that this "
    "section answers, in a reader's own words, one per line. Name the functions, "
    "statements, classes or options involved exactly as the text spells them. Ask only "
    "what the section itself answers. No preamble, no numbering, no heading."
)

#: v2's summary sentence, then the questions it answers (docs/eval.md).
SUMMARY_QUESTIONS_SYSTEM_PROMPT = (
    "You write search keys for one section of technical documentation. First, one sentence "
    "that says what the section explains and names the functions, statements, classes or "
    "options it covers. Then two questions that a reader would ask and that this section "
    "answers, in a reader's own words. Say only what the section itself says. No preamble, "
    "no list, no heading."
)

#: The system prompt of each prompt version (`Settings.summaries.prompt_version`).
PROMPTS = {
    PROMPT_VERSION: SYSTEM_PROMPT,
    "v3-retrieval": RETRIEVAL_SYSTEM_PROMPT,
    "v4-questions": QUESTIONS_SYSTEM_PROMPT,
    "v5-summary-questions": SUMMARY_QUESTIONS_SYSTEM_PROMPT,
}

#: The retry prompt for a summary the guard flagged.
STRICT_SYSTEM_PROMPT = (
    "You summarize one section of technical documentation for a search index. "
    "Write at most three sentences in your own words: never copy sentences from the "
    "text, never repeat a sentence, and write no labels such as 'Topic:' or 'Section:'. "
    "Say only what the text says: no name, number, date or function it does not mention. "
    "Say what the section explains and name the statements, functions or classes it is "
    "about, exactly as the text spells them."
)


def prompt_messages(
    headers: Sequence[str],
    body: str,
    *,
    prompt_version: str = PROMPT_VERSION,
    strict: bool = False,
) -> list[SystemMessage | HumanMessage]:
    """The prompt for one chunk: the header path once ("Topic: A › B"), then `body` (the
    chunk as `clean_for_prompt` leaves it), under the system prompt of `prompt_version`.

    The strict variant (the guard's retry) has a sterner system prompt and names the
    identifiers the summary should mention.
    """
    topic = " › ".join(headers) or "(untitled)"
    if not strict:
        return [
            SystemMessage(content=PROMPTS[prompt_version]),
            HumanMessage(content=f"Topic: {topic}\n\n{body}"),
        ]
    names = chunk_identifiers(body, limit=6)
    mention = f" Mention: {', '.join(names)}." if names else ""
    return [
        SystemMessage(content=STRICT_SYSTEM_PROMPT),
        HumanMessage(
            content=f"Topic: {topic}\n\n{body}\n\n"
            f"In your own words, what does this text explain?{mention}"
        ),
    ]
