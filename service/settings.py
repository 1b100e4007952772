"""The one settings object of Synopsis, loaded from `SYNOPSIS_*` environment variables.

Library code receives a `Settings`; only `Settings.from_env` reads the environment.
Every field `name` is set by the variable `SYNOPSIS_<NAME>` (upper case).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import platformdirs

from service.errors import ConfigurationError
from service.index.records import SummaryVector
from service.query.modes import Mode

__all__ = [
    "CONSISTENCY_LEVELS",
    "ENV_PREFIX",
    "LOADER_LIMITS",
    "MAX_K",
    "PROMPT_VERSIONS",
    "REWRITE_METHODS",
    "SUMMARY_VECTORS",
    "WEAVIATE_NODE_PORT_STRIDE",
    "ConsistencyLevel",
    "PromptVersion",
    "RewriteMethod",
    "Settings",
]

ENV_PREFIX = "SYNOPSIS_"

# A field typed as a `Literal` may hold only the values it lists: `from_env` and direct
# construction alike refuse any other, naming the variable and the allowed values.

#: Weaviate's consistency levels, for `read_consistency` and `write_consistency`.
ConsistencyLevel = Literal["ONE", "QUORUM", "ALL"]
CONSISTENCY_LEVELS: tuple[ConsistencyLevel, ...] = typing.get_args(ConsistencyLevel)
#: How a conversation's follow-up becomes a search query (`conversation_rewrite`).
RewriteMethod = Literal["model", "previous", "none"]
REWRITE_METHODS: tuple[RewriteMethod, ...] = typing.get_args(RewriteMethod)
#: The summary prompts (`summary_prompt_version`; their texts: service/ingest/summarize.py,
#: `PROMPTS`, whose keys are exactly these).
PromptVersion = Literal["v2", "v3-retrieval", "v4-questions", "v5-summary-questions"]
PROMPT_VERSIONS: tuple[PromptVersion, ...] = typing.get_args(PromptVersion)
#: The most hits one search returns (`SYNOPSIS_API_MAX_K` may only lower it).
MAX_K = 100
#: The token budgets a search's context or a page of read text may have (cl100k_base):
#: below the first, hardly one chunk fits; past the second, read a document instead.
MIN_CONTEXT_TOKENS = 500
MAX_CONTEXT_TOKENS = 100_000
#: The vectors of a chunk's summary that `joint` search can read (service/index/records.py).
SUMMARY_VECTORS: tuple[SummaryVector, ...] = typing.get_args(SummaryVector)
#: Node i of a local Weaviate cluster listens on node 0's HTTP and gRPC ports + i times this.
WEAVIATE_NODE_PORT_STRIDE = 10
#: The loader limits (`loaders.LoadOptions` fields of the same names) the settings carry.
LOADER_LIMITS = (
    "max_markup_tags",
    "max_archive_members",
    "max_inflated_bytes",
    "max_compression_ratio",
    "max_pdf_pages",
    "max_page_chars",
    "max_pdf_operations",
    "max_pdf_content_bytes",
)
#: The deadlines of outbound calls (seconds, each more than 0).
_DEADLINES = (
    "weaviate_init_timeout",
    "weaviate_query_timeout",
    "weaviate_insert_timeout",
    "embedding_timeout",
    "query_embedding_timeout",
    "answer_timeout",
    "summary_timeout",
)
#: A name of `api_allowed_hosts`: `*`, a host name (`*.` before it: the names under it), an
#: IPv4 or an IPv6 address (with or without brackets).
_HOST_PATTERN = re.compile(
    r"\*|(\*\.)?[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?|\[?[0-9a-f]*:[0-9a-f]*:[0-9a-f:.]*\]?"
)
#: Node counts the local stack runs: one server, or a cluster whose raft survives one loss.
_LOCAL_WEAVIATE_NODES = (1, 3)


def _default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("synopsis"))


def _default_cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir("synopsis"))


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Typed configuration. Build it with `Settings.from_env()` or directly in tests."""

    # Where the local stack keeps its data (Weaviate's files, Ollama's models, pid files, logs).
    data_dir: Path = field(default_factory=_default_data_dir)
    # Where built server binaries and downloaded model packages are cached, keyed by version.
    cache_dir: Path = field(default_factory=_default_cache_dir)

    # External Weaviate, e.g. "http://weaviate:8080". Empty: run the local stack's own.
    weaviate_url: str = ""
    weaviate_grpc_host: str = ""  # empty: the host of weaviate_url
    weaviate_grpc_port: int = 50051
    weaviate_api_key: str = field(default="", repr=False)  # never printed with the settings
    # Copies of every object of Synopsis's collections (service/index/replication.py): 1 is
    # a single copy; more need that many Weaviate nodes (a cluster, e.g. weaviate_nodes=3).
    # Weaviate >= 1.38 repairs the copies in the background (async replication) whenever
    # the factor is above 1. Reads and writes wait for ONE, a QUORUM or ALL of the copies;
    # the levels apply only with a factor above 1 (QUORUM + QUORUM: a read sees every
    # acknowledged write, and either survives one node of three being down).
    replication_factor: int = 1
    read_consistency: ConsistencyLevel = "QUORUM"
    write_consistency: ConsistencyLevel = "QUORUM"

    # External Ollama, e.g. "http://ollama:11434". Empty: run the local stack's own.
    ollama_url: str = ""

    # Deadlines of the calls to Weaviate and Ollama, in seconds: a server that hangs (not
    # dead: it accepts connections and never answers) fails the call after this long, and
    # the HTTP API answers 503. Weaviate: connecting (each start-up check), a query or a
    # REST call, a batch write. Ollama: a batch of document texts to embed, a query to
    # embed, and an answer (also a document summary, a follow-up rewrite), the wait for
    # each of its streamed parts. Summaries have their own, `summary_timeout`.
    weaviate_init_timeout: float = 10.0
    weaviate_query_timeout: float = 60.0
    weaviate_insert_timeout: float = 120.0
    embedding_timeout: float = 120.0
    query_embedding_timeout: float = 10.0
    answer_timeout: float = 120.0

    # Prefix of the collection names (e.g. "Mxbai" → MxbaiOriginalDocuments): re-index into
    # new collections when the embedding model changes, or keep separate indexes apart.
    collection_prefix: str = ""

    chat_model: str = "smollm2-135m-instruct"
    # The model that writes answers; empty: the chat model. An answer is one call where an
    # ingest makes thousands of summaries, so a larger model can be worth it here alone.
    # Ollama keeps it loaded beside the chat model (the local stack allows 3 models).
    answer_model: str = ""
    # The chat models' context window, the same for summaries and answers: Ollama loads a
    # model once per context size, so two sizes would make answers wait for a running
    # ingest's summaries (or reload the model back and forth). A separate answer model is
    # loaded once too, at this size: the prompt of an answer (k passages of up to
    # max_tokens each, plus answer_max_tokens) must fit in it.
    chat_context_tokens: int = 4096
    embedding_model: str = "all-minilm-l6-v2"

    # Chunking, summarizing and embedding.
    max_tokens: int = 500
    # A source that splits into more chunks than this is not indexed (each chunk costs a
    # model call: a 10,000-page PDF or 20 MB of one-line text would take days on a small
    # machine); it is reported failed, naming this setting. 0: no limit. The largest page
    # of the Python docs is about 150 chunks.
    max_chunks_per_source: int = 2_000
    summary_concurrency: int = 2
    # An ingest (or a delete) holds each source it changes (a lease in Weaviate, renewed
    # every third of `ingest_lock_seconds`; a killed process's ends after that long); an
    # ingest of a source another one holds waits up to `ingest_lock_wait_seconds`, then
    # reports the source failed. A delete does not wait (HTTP 409).
    ingest_lock_seconds: float = 60.0
    ingest_lock_wait_seconds: float = 600.0
    # Per summary call, including the wait in Ollama's queue when it serves several clients.
    summary_timeout: float = 300.0
    summary_retries: int = 3
    # A summary call slower than this is logged as a warning and counted in the report.
    summary_slow_seconds: float = 60.0
    # num_predict: the longest reply the model may write, kept below summary_max_words
    # (about 0.75 words per token) so that a reply cut by the limit is not "too_long".
    summary_max_tokens: int = 120
    # The summary prompt (service/ingest/summarize.py, PROMPTS); part of each summary's id.
    summary_prompt_version: PromptVersion = "v2"
    # The summary guard (service/ingest/quality.py): a flagged summary is retried once with
    # a stricter prompt, then replaced by an extractive one (kind "extractive", with reason).
    summary_guard: bool = True
    summary_min_words: int = 4  # fewer words: "empty"
    summary_max_words: int = 100  # more words: "too_long"
    summary_max_copied_share: float = 0.5  # of the summary's words in 8+-word copied spans
    summary_max_repeated_share: float = 0.2  # of the summary's 5-grams that repeat
    summary_min_shared_terms: int = 1  # salient chunk terms (header, identifiers) to mention
    # "invented" (service/ingest/faithfulness.py): this many numbers, URLs, names or code
    # identifiers the chunk, its headers and title do not contain, or more than this share
    # of new content words; 0 switches either off.
    summary_max_invented_claims: int = 1
    summary_max_unsupported_share: float = 0.15
    embedding_batch_size: int = 32
    # The most query texts of concurrent searches sent in one embedding call (a query that
    # finds no call running is sent at once; those arriving meanwhile share the next
    # call). 1: each search makes its own call.
    query_embedding_batch_size: int = 32
    # An Ollama vision model that captions PDF images (service/models/captions.py); empty: off,
    # images are only counted. The local stack has none.
    vision_model: str = ""

    # URL sources: how many levels of same-site links to follow, and at most how many pages.
    crawl_depth: int = 0
    max_pages: int = 200
    # Hosts or networks (comma-separated: "docs.internal, 10.0.0.0/8") that a URL ingest
    # over the HTTP API may reach although they are loopback or private; every other
    # such address is refused (loaders/addresses.py). The CLI does not check addresses.
    fetch_allow: str = ""
    # The whole fetch of one URL (its redirects and body included) must end within this
    # many seconds, so a server trickling a byte at a time cannot hold a fetch forever.
    fetch_deadline: float = 60.0
    # What a small source may expand to (loaders/options.py; docs/reliability.md,
    # "Decompression bombs"): tags of an HTML page or of a Word file's XML; a Word file's
    # (zip) members, what they inflate to together, and how many times its compressed size
    # any member over 1 MiB may inflate to; a PDF's pages, the characters of text on one
    # page, the things (text, paths, images, clips) the whole document draws, and what its
    # content streams inflate to (each form as often as drawn). A source over one is
    # refused, its reason saying which limit and its value.
    max_markup_tags: int = 500_000
    max_archive_members: int = 10_000
    max_inflated_bytes: int = 100_000_000
    max_compression_ratio: int = 100
    max_pdf_pages: int = 5_000
    max_page_chars: int = 200_000
    max_pdf_operations: int = 5_000_000
    max_pdf_content_bytes: int = 100_000_000

    # Search defaults (service/query/search.py; the measurements behind them: docs/eval.md).
    search_k: int = 5
    search_alpha: float = 0.5
    search_mode: Mode = "joint"
    # `joint` mode: which vector of each chunk's summary it reads (context: the summary
    # and the chunk embedded together; summary: the summary alone), that vector's share
    # of the vector score (the rest: the chunk's own vector), and the weight of the
    # summary's words in BM25 against the chunk's (0: BM25 reads the chunk only).
    search_summary_vector: SummaryVector = "context"
    search_summary_weight: float = 1.0
    search_summary_keyword_weight: float = 0.5
    # The token budget of a search given as context (MCP `search_docs`, and POST /search
    # with `expand: section` but no `max_tokens`) and of a page of read text.
    search_max_tokens: int = 5000
    # A summary whose embedding's cosine similarity to its chunk's is below this is kept in
    # SummarizedDocuments but not attached to its chunk (service/ingest/attach.py).
    summary_min_similarity: float = 0.0
    # Absolute relevance gate: a hit whose embedding is farther than this cosine distance
    # from the query is dropped (0 disables). Weaviate's hybrid scores are normalized per
    # query, so they cannot serve as such a gate.
    max_vector_distance: float = 0.0
    # The gate `ask` uses unless told otherwise: a question whose passages are all farther
    # than this is answered "I don't know" without an LLM call. 0.75 is measured for
    # all-minilm-l6-v2 on the Python tutorial (docs/eval.md); re-measure with
    # `synopsis eval --sweep` for another embedding model.
    answer_max_vector_distance: float = 0.75
    answer_max_tokens: int = 300  # num_predict of an answer
    # `ask` answers "I don't know" without an LLM call when the question names something
    # (a proper noun such as "Go", an acronym, a code identifier) that none of the
    # retrieved passages mention (service/query/answer.py, `missing_terms`).
    answer_term_check: bool = True
    # The grounding check of a generated answer (service/query/grounding.py): each sentence
    # needs at least this share of its content words in a passage it cites (or the best
    # passage), or the answer is replaced by the extractive one. 0.7: on both question
    # sets every reply that passed at 0.6 was wrong, and 0.7 removed some on both
    # (docs/answers.md); no correct reply was seen, so re-measure for a larger answer model.
    answer_min_support: float = 0.7
    # Conversations (POST /conversations, service/conversations/): the turns kept per
    # conversation (older ones are dropped), and how a follow-up becomes a search query:
    # "previous" (the previous turn's query, then the follow-up), "model" (the answer
    # model rewrites it from the last `conversation_context_turns` turns; "previous" when
    # the reply is unusable), "none" (as asked). docs/conversations.md measures the three:
    # with SmolLM2-135M, "previous" finds the section best and costs no model call.
    conversation_max_turns: int = 20
    conversation_context_turns: int = 3
    conversation_rewrite: RewriteMethod = "previous"
    # At most this many conversations per API key (0: no cap), counted atomically across
    # processes; a key at its cap gets 429 until it deletes one or one expires.
    conversations_per_key: int = 1_000

    # Retention (service/retention.py). Every service process sweeps each
    # `retention_sweep_seconds` (0: never) and removes jobs that ended more than
    # `jobs_retention_days` ago (with their uploads and claims), the uploads of jobs that
    # ended without `done` (kept for a retry) after `uploads_retention_days`, and
    # conversations idle for `conversations_retention_days`; it also removes ended
    # leases, frees job and conversation slots whose holder is gone, and finishes deletes
    # that stopped part-way. 0 days: kept for ever.
    retention_sweep_seconds: float = 3600.0
    jobs_retention_days: float = 30.0
    uploads_retention_days: float = 7.0
    conversations_retention_days: float = 30.0

    # The HTTP API (`synopsis serve`): loopback by default; a container sets 0.0.0.0.
    api_host: str = "127.0.0.1"
    api_port: int = 8000
    # Worker processes of `synopsis serve`; each opens its own connections, and the
    # metrics add up across them (service/edges/api/metrics.py).
    api_workers: int = 1
    # API keys (service/edges/api/security.py), sent as `Authorization: Bearer <key>`: read
    # keys may search, ask and list; write keys may also ingest, delete and manage jobs.
    # Comma-separated; kept out of repr so that printing the settings never shows a key.
    api_read_keys: str = field(default="", repr=False)
    api_write_keys: str = field(default="", repr=False)
    # A file of `read <key>` / `write <key>` lines (`#` comments), e.g. a container secret;
    # empty: none. Its keys add to the two lists above.
    api_keys_file: str = ""
    # With no key configured the API is open to anyone who reaches it, so `synopsis serve`
    # refuses a non-loopback host unless this is set explicitly.
    api_allow_open: bool = False
    # Host names the API answers to (the Host header, port aside), comma-separated;
    # "*.corp" for every name under corp, "*" for any. Empty: the loopback names
    # (localhost, *.localhost, 127.0.0.0/8, ::1) and api_host. A name not served is a 400,
    # so that a name of an attacker's that resolves to this machine (DNS rebinding) gets
    # nothing (service/edges/api/crosssite.py). /health and /ready answer any name.
    api_allowed_hosts: str = ""
    # Request limits; a request over one is refused with a 4xx naming the field.
    api_max_query_chars: int = 4000  # of a search query or a question
    api_max_k: int = 100  # results of a search (an answer cites at most 20 passages)
    api_max_body_bytes: int = 1_048_576  # of a JSON request body (413 beyond)
    # Model calls of the API (answers, conversation turns, document summaries) run on
    # threads of their own, this many at a time per service process (a streamed answer
    # takes one of these slots too); searches, listings and job polls never wait for
    # them. An API key (without keys: everyone) may have this many running or waiting at
    # once; one more is refused with 429 and Retry-After (service/edges/api/llm_work.py).
    api_llm_workers: int = 4
    api_llm_per_key: int = 2

    # Ingest jobs of the HTTP API (service/jobs/): jobs run at a time per service process
    # (0: this process only queues them, others run them), queued jobs at most (a full
    # queue answers 429), queued or running jobs per API key.
    jobs_workers: int = 1
    jobs_queue_size: int = 100
    jobs_per_key: int = 10
    # A running job whose worker has not written a heartbeat for this long is
    # `interrupted` (its service process stopped or was killed); heartbeats come every
    # third of it. How often each service process looks for queued jobs (less than a
    # third of the lease, so heartbeats keep up).
    jobs_lease_seconds: float = 30.0
    jobs_poll_seconds: float = 1.0
    # A job that makes no progress (no chunk written, no summary finished) for this long
    # is `interrupted`, and stops sending heartbeats: a call that hangs. Keep it above
    # the longest single step, `summary_timeout` (a summary that times out falls back to
    # an extractive one, which is progress).
    jobs_stall_seconds: float = 900.0
    # A job that runs longer than this is `interrupted` (0: no limit); a retry goes on
    # where it stopped. 12 h: about 10,000 summaries at 4 s each.
    jobs_max_seconds: float = 43_200.0
    # Uploads (POST /documents, multipart): bytes per file, per request, files per request;
    # URL ingests: crawl depth and pages at most.
    api_max_upload_file_bytes: int = 20_000_000
    api_max_upload_bytes: int = 50_000_000
    api_max_upload_files: int = 50
    api_max_crawl_depth: int = 5
    api_max_crawl_pages: int = 1_000
    # Directories (comma-separated absolute paths) under which POST /sources may register
    # a directory source; empty: the API registers none (the CLI registers any).
    api_source_directories: str = ""
    # How often each service process probes Weaviate's readiness; while the last probe
    # failed, requests that need Weaviate are answered 503 at once (api/watch.py).
    api_weaviate_probe_seconds: float = 2.0

    # The local stack: versions, loopback ports and limits.
    weaviate_version: str = "1.39.0"
    ollama_version: str = "0.24.0"
    local_weaviate_port: int = 18080
    local_weaviate_grpc_port: int = 15051
    local_ollama_port: int = 11435
    # Weaviate servers of the local stack: 1, or 3 for a cluster on loopback (`synopsis stack
    # up --nodes 3`). Node 0 takes the ports above; node i takes them + 10·i (HTTP, gRPC, and
    # its own HTTP port + 1…4 for gossip, data, raft and raft RPC). Clients use node 0.
    weaviate_nodes: int = 1
    weaviate_memory_limit: str = "2GiB"
    stack_start_timeout: float = 120.0
    # Build the local Ollama for this machine's CPU (-march=native): much faster inference,
    # and the cache key includes the CPU's flags so the binary is never reused elsewhere.
    ollama_native_build: bool = True

    def __post_init__(self) -> None:
        self._check_choices()
        self._check_replication()
        self._check_local_ports()
        self._check_api_limits()
        self._check_deadlines()
        if not MIN_CONTEXT_TOKENS <= self.search_max_tokens <= MAX_CONTEXT_TOKENS:
            raise ConfigurationError(
                f"{self.env_names()['search_max_tokens']} must be between "
                f"{MIN_CONTEXT_TOKENS} and {MAX_CONTEXT_TOKENS}"
            )
        for name in ("search_summary_weight", "search_summary_keyword_weight"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigurationError(f"{self.env_names()[name]} must be between 0 and 1")
        if self.conversation_max_turns < 1 or self.conversation_context_turns < 1:
            raise ConfigurationError(
                f"{self.env_names()['conversation_max_turns']} and "
                f"{self.env_names()['conversation_context_turns']} must be at least 1"
            )
        if not 0.0 <= self.answer_min_support <= 1.0:
            raise ConfigurationError(
                f"{self.env_names()['answer_min_support']} must be between 0 and 1 (a share)"
            )

    def _check_choices(self) -> None:
        """Every field typed as a `Literal` holds one of the values it lists."""
        names = self.env_names()
        for name, allowed in self.choices().items():
            value = getattr(self, name)
            if value not in allowed:
                raise ConfigurationError(
                    f"{names[name]}={value!r} is not one of {', '.join(map(str, allowed))}"
                )

    def _check_api_limits(self) -> None:
        """Every API and loader limit at least 1 (a limit of 0 would refuse everything)."""
        names = self.env_names()
        api = (
            "api_workers",
            "api_max_query_chars",
            "api_max_k",
            "api_max_body_bytes",
            "api_llm_workers",
            "api_llm_per_key",
            "query_embedding_batch_size",
        )
        for name in (*api, *LOADER_LIMITS):
            if getattr(self, name) < 1:
                raise ConfigurationError(f"{names[name]} must be at least 1")
        if not 0 < self.jobs_poll_seconds < self.jobs_lease_seconds / 3:
            raise ConfigurationError(
                f"{names['jobs_poll_seconds']} must be more than 0 and less than a third of "
                f"{names['jobs_lease_seconds']} (heartbeats are written every third of it)"
            )
        for name in (
            "conversations_per_key",
            "retention_sweep_seconds",
            "jobs_retention_days",
            "uploads_retention_days",
            "conversations_retention_days",
        ):
            if getattr(self, name) < 0:
                raise ConfigurationError(f"{names[name]} must be at least 0 (0: off)")
        if self.ingest_lock_seconds <= 0 or self.ingest_lock_wait_seconds < 0:
            raise ConfigurationError(
                f"{names['ingest_lock_seconds']} must be more than 0 and "
                f"{names['ingest_lock_wait_seconds']} at least 0"
            )
        if self.jobs_stall_seconds <= 0 or self.jobs_max_seconds < 0:
            raise ConfigurationError(
                f"{names['jobs_stall_seconds']} must be more than 0 and "
                f"{names['jobs_max_seconds']} at least 0 (0: no limit)"
            )
        for host in self.allowed_host_names:
            if not _HOST_PATTERN.fullmatch(host):
                raise ConfigurationError(
                    f"{names['api_allowed_hosts']}: {host!r} is not a host name (no scheme, "
                    "no port; a leading *. for a domain's names, or * alone for any)"
                )
        for directory in self.source_directories:
            if not directory.is_absolute():
                raise ConfigurationError(
                    f"{names['api_source_directories']}: {str(directory)!r} is not an absolute path"
                )
        if self.api_max_k > MAX_K:
            raise ConfigurationError(
                f"{names['api_max_k']} must be at most {MAX_K} (the most hits one search returns)"
            )

    def _check_deadlines(self) -> None:
        """Every deadline positive (a deadline of 0 would fail every call)."""
        names = self.env_names()
        for name in _DEADLINES:
            if not getattr(self, name) > 0:
                raise ConfigurationError(f"{names[name]} must be more than 0 seconds")

    def _check_replication(self) -> None:
        """Node count, replication factor and consistency levels that can work together."""
        names = self.env_names()
        if self.weaviate_nodes not in _LOCAL_WEAVIATE_NODES:
            raise ConfigurationError(
                f"{names['weaviate_nodes']}={self.weaviate_nodes}: the local stack runs 1 "
                "Weaviate node or a cluster of 3"
            )
        if self.replication_factor < 1:
            raise ConfigurationError(f"{names['replication_factor']} must be at least 1")
        if self.uses_local_weaviate and self.replication_factor > self.weaviate_nodes:
            raise ConfigurationError(
                f"{names['replication_factor']}={self.replication_factor} needs as many "
                f"Weaviate nodes, but the local stack runs {self.weaviate_nodes}; set "
                f"{names['weaviate_nodes']}=3 (or use an external cluster)"
            )

    def local_weaviate_node_ports(self, index: int) -> dict[str, int]:
        """The loopback ports of node `index` of the local Weaviate (0: the one server, or
        the first of a cluster), by role: HTTP and gRPC, then gossip, data, raft and raft
        RPC at HTTP + 1…4 (Weaviate on loopback finds a node's raft RPC port at its raft
        port + 1)."""
        http = self.local_weaviate_port + WEAVIATE_NODE_PORT_STRIDE * index
        return {
            "http": http,
            "grpc": self.local_weaviate_grpc_port + WEAVIATE_NODE_PORT_STRIDE * index,
            "gossip": http + 1,
            "data": http + 2,
            "raft": http + 3,
            "raft rpc": http + 4,
        }

    def _check_local_ports(self) -> None:
        """Every local port in range and distinct (Weaviate also takes HTTP port + 1…4, and
        node i of a local cluster the HTTP and gRPC ports + 10·i)."""
        names = self.env_names()
        http_name, grpc_name = names["local_weaviate_port"], names["local_weaviate_grpc_port"]
        taken: dict[int, str] = {}
        wanted: list[tuple[int, str]] = []
        for index in range(self.weaviate_nodes):
            ports = self.local_weaviate_node_ports(index)
            grpc = ports.pop("grpc")
            for port in ports.values():
                offset = port - self.local_weaviate_port
                wanted.append((port, f"{http_name} + {offset}" if offset else http_name))
            offset = grpc - self.local_weaviate_grpc_port
            wanted.append((grpc, f"{grpc_name} + {offset}" if offset else grpc_name))
        wanted.append((self.local_ollama_port, names["local_ollama_port"]))
        for port, name in wanted:
            if not 1 <= port <= 65535:
                raise ConfigurationError(f"{name}: port {port} is not between 1 and 65535")
            if port in taken:
                cluster = (
                    ", node i of a cluster its HTTP and gRPC ports + 10·i"
                    if self.weaviate_nodes > 1
                    else ""
                )
                raise ConfigurationError(
                    f"{name} and {taken[port]} are both port {port}; the local stack needs "
                    f"distinct ports (Weaviate's cluster uses its HTTP port + 1…4{cluster})"
                )
            taken[port] = name

    @property
    def allowed_host_names(self) -> tuple[str, ...]:
        """The names of `api_allowed_hosts`, lower-cased (empty when it is not set)."""
        return tuple(
            name.strip().lower().rstrip(".")
            for name in self.api_allowed_hosts.split(",")
            if name.strip()
        )

    @property
    def source_directories(self) -> tuple[Path, ...]:
        """The directories of `api_source_directories` (empty when it is not set)."""
        return tuple(
            Path(entry.strip()).expanduser()
            for entry in self.api_source_directories.split(",")
            if entry.strip()
        )

    @property
    def uses_local_weaviate(self) -> bool:
        """True when no external Weaviate is configured."""
        return not self.weaviate_url

    @property
    def resolved_answer_model(self) -> str:
        """The model that writes answers: `answer_model`, else the chat model."""
        return self.answer_model or self.chat_model

    @property
    def uses_local_ollama(self) -> bool:
        """True when no external Ollama is configured."""
        return not self.ollama_url

    @property
    def resolved_ollama_url(self) -> str:
        """The Ollama base URL in use: the external one, or the local stack's."""
        return self.ollama_url or f"http://127.0.0.1:{self.local_ollama_port}"

    @classmethod
    def choices(cls) -> dict[str, tuple[object, ...]]:
        """The fields that take one of a fixed set of values, each with its values in order."""
        return dict(_choices())

    @classmethod
    def env_names(cls) -> dict[str, str]:
        """Map every field to the environment variable that sets it."""
        return {f.name: ENV_PREFIX + f.name.upper() for f in dataclasses.fields(cls)}

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Load settings from `environ` (default: `os.environ`); unset variables keep defaults."""
        env = os.environ if environ is None else environ
        hints = typing.get_type_hints(cls)
        values: dict[str, object] = {}
        for name, var in cls.env_names().items():
            raw = env.get(var)
            if raw is None:
                continue
            values[name] = _convert(var, raw.strip(), hints[name])
        return cls(**values)  # type: ignore[arg-type]


@functools.cache
def _choices() -> tuple[tuple[str, tuple[object, ...]], ...]:
    """(field, values) of every field of `Settings` typed as a `Literal` (read once)."""
    hints = typing.get_type_hints(Settings)
    return tuple(
        (f.name, typing.get_args(hints[f.name]))
        for f in dataclasses.fields(Settings)
        if typing.get_origin(hints[f.name]) is Literal
    )


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _convert(var: str, raw: str, kind: object) -> object:
    if typing.get_origin(kind) is Literal:
        kind = type(typing.get_args(kind)[0])  # the value is checked by `_check_choices`
    try:
        if kind is bool:
            lowered = raw.lower()
            if lowered not in _TRUE | _FALSE:
                raise ValueError(f"expected one of {sorted(_TRUE | _FALSE)}")
            return lowered in _TRUE
        if kind is int:
            return int(raw)
        if kind is float:
            return float(raw)
        if kind is Path:
            if not raw:
                raise ValueError("expected a path")
            return Path(raw).expanduser()
        return raw
    except ValueError as exc:
        raise ConfigurationError(f"{var}={raw!r} is invalid: {exc}") from exc
