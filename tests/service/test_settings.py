"""Settings: defaults, parsing of `SYNOPSIS_*` variables, and clear errors for bad values."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from service.errors import ConfigurationError, SynopsisError
from service.ingest.prompts import PROMPTS
from service.query.modes import MODES
from service.settings import PROMPT_VERSIONS, TOPICS, Settings


def test_env_names() -> None:
    names = Settings.env_names()
    assert names["weaviate_url"] == "SYNOPSIS_WEAVIATE_URL"
    assert names["local_ollama_port"] == "SYNOPSIS_LOCAL_OLLAMA_PORT"


@pytest.mark.parametrize(
    ("variable", "raw", "field", "value"),
    [
        ("SYNOPSIS_WEAVIATE_URL", "http://weaviate:8080", "weaviate_url", "http://weaviate:8080"),
        ("SYNOPSIS_WEAVIATE_URL", "  http://w:8080 \n", "weaviate_url", "http://w:8080"),
        ("SYNOPSIS_WEAVIATE_GRPC_PORT", "50052", "weaviate_grpc_port", 50052),
        ("SYNOPSIS_WEAVIATE_GRPC_PORT", " 7 ", "weaviate_grpc_port", 7),
        ("SYNOPSIS_WEAVIATE_API_KEY", "k3y", "weaviate_api_key", "k3y"),
        ("SYNOPSIS_CHAT_MODEL", "llama3.1", "chat_model", "llama3.1"),
        ("SYNOPSIS_EMBEDDING_MODEL", "mxbai-embed-large", "embedding_model", "mxbai-embed-large"),
        ("SYNOPSIS_STACK_START_TIMEOUT", "2.5", "stack_start_timeout", 2.5),
        ("SYNOPSIS_STACK_START_TIMEOUT", "30", "stack_start_timeout", 30.0),
        ("SYNOPSIS_DATA_DIR", "/srv/synopsis", "data_dir", Path("/srv/synopsis")),
        ("SYNOPSIS_CACHE_DIR", "~/c", "cache_dir", Path.home() / "c"),
        ("SYNOPSIS_OLLAMA_NATIVE_BUILD", "false", "ollama_native_build", False),
        ("SYNOPSIS_OLLAMA_NATIVE_BUILD", "0", "ollama_native_build", False),
        ("SYNOPSIS_OLLAMA_NATIVE_BUILD", "no", "ollama_native_build", False),
        ("SYNOPSIS_OLLAMA_NATIVE_BUILD", "OFF", "ollama_native_build", False),
        ("SYNOPSIS_OLLAMA_NATIVE_BUILD", "", "ollama_native_build", False),
        ("SYNOPSIS_OLLAMA_NATIVE_BUILD", "True", "ollama_native_build", True),
        ("SYNOPSIS_OLLAMA_NATIVE_BUILD", "1", "ollama_native_build", True),
        ("SYNOPSIS_OLLAMA_NATIVE_BUILD", "yes", "ollama_native_build", True),
        ("SYNOPSIS_OLLAMA_NATIVE_BUILD", "on", "ollama_native_build", True),
    ],
)
def test_parses_each_kind(variable: str, raw: str, field: str, value: object) -> None:
    settings = Settings.from_env({variable: raw})
    assert settings.value(field) == value
    assert type(settings.value(field)) is type(value)


@pytest.mark.parametrize(
    ("variable", "raw", "message"),
    [
        (
            "SYNOPSIS_WEAVIATE_GRPC_PORT",
            "fifty",
            "SYNOPSIS_WEAVIATE_GRPC_PORT='fifty' is invalid: "
            "invalid literal for int() with base 10: 'fifty'",
        ),
        (
            "SYNOPSIS_LOCAL_OLLAMA_PORT",
            "11435.5",
            "SYNOPSIS_LOCAL_OLLAMA_PORT='11435.5' is invalid: "
            "invalid literal for int() with base 10: '11435.5'",
        ),
        (
            "SYNOPSIS_STACK_START_TIMEOUT",
            "soon",
            "SYNOPSIS_STACK_START_TIMEOUT='soon' is invalid: "
            "could not convert string to float: 'soon'",
        ),
        (
            "SYNOPSIS_OLLAMA_NATIVE_BUILD",
            "maybe",
            "SYNOPSIS_OLLAMA_NATIVE_BUILD='maybe' is invalid: expected one of "
            "['', '0', '1', 'false', 'no', 'off', 'on', 'true', 'yes']",
        ),
        ("SYNOPSIS_DATA_DIR", "   ", "SYNOPSIS_DATA_DIR='' is invalid: expected a path"),
    ],
)
def test_bad_values_raise_configuration_error(variable: str, raw: str, message: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        Settings.from_env({variable: raw})
    assert str(caught.value) == message
    assert isinstance(caught.value, SynopsisError)


@pytest.mark.parametrize(
    ("environ", "local_weaviate", "local_ollama", "ollama_url"),
    [
        ({}, True, True, "http://127.0.0.1:11435"),
        ({"SYNOPSIS_LOCAL_OLLAMA_PORT": "11535"}, True, True, "http://127.0.0.1:11535"),
        ({"SYNOPSIS_WEAVIATE_URL": "http://w:8080"}, False, True, "http://127.0.0.1:11435"),
        ({"SYNOPSIS_OLLAMA_URL": "http://o:11434"}, True, False, "http://o:11434"),
        ({"SYNOPSIS_OLLAMA_URL": ""}, True, True, "http://127.0.0.1:11435"),
    ],
)
def test_local_or_external(
    environ: dict[str, str], local_weaviate: bool, local_ollama: bool, ollama_url: str
) -> None:
    settings = Settings.from_env(environ)
    assert settings.uses_local_weaviate is local_weaviate
    assert settings.uses_local_ollama is local_ollama
    assert settings.resolved_ollama_url == ollama_url


def test_api_defaults() -> None:
    settings = Settings.from_env({})
    assert (settings.api.read_keys, settings.api.write_keys, settings.api.keys_file) == ("", "", "")
    assert settings.api.allow_open is False
    assert settings.api.workers == 1
    assert (settings.api_limits.max_query_chars, settings.api_limits.max_k) == (4000, 100)
    assert settings.api_limits.max_body_bytes == 1_048_576


@pytest.mark.parametrize(
    ("variable", "raw", "field", "value"),
    [
        ("SYNOPSIS_API_READ_KEYS", "a, b", "api_read_keys", "a, b"),
        ("SYNOPSIS_API_WRITE_KEYS", "w", "api_write_keys", "w"),
        ("SYNOPSIS_API_KEYS_FILE", "/run/secrets/keys", "api_keys_file", "/run/secrets/keys"),
        ("SYNOPSIS_API_ALLOW_OPEN", "true", "api_allow_open", True),
        ("SYNOPSIS_API_ALLOWED_HOSTS", "a.corp, *.corp", "api_allowed_hosts", "a.corp, *.corp"),
        ("SYNOPSIS_API_WORKERS", "4", "api_workers", 4),
        ("SYNOPSIS_API_MAX_QUERY_CHARS", "200", "api_max_query_chars", 200),
        ("SYNOPSIS_API_MAX_K", "20", "api_max_k", 20),
        ("SYNOPSIS_API_MAX_BODY_BYTES", "65536", "api_max_body_bytes", 65536),
        ("SYNOPSIS_API_WEAVIATE_PROBE_SECONDS", "0.5", "api_weaviate_probe_seconds", 0.5),
        ("SYNOPSIS_FETCH_DEADLINE", "3", "fetch_deadline", 3.0),
    ],
)
def test_api_fields_parse(variable: str, raw: str, field: str, value: object) -> None:
    assert Settings.from_env({variable: raw}).value(field) == value


@pytest.mark.parametrize(
    "variable",
    [
        "SYNOPSIS_API_WORKERS",
        "SYNOPSIS_API_MAX_QUERY_CHARS",
        "SYNOPSIS_API_MAX_K",
        "SYNOPSIS_API_MAX_BODY_BYTES",
        "SYNOPSIS_MAX_INFLATED_BYTES",
        "SYNOPSIS_MAX_ARCHIVE_MEMBERS",
        "SYNOPSIS_MAX_PDF_PAGES",
        "SYNOPSIS_MAX_PDF_CONTENT_BYTES",
        "SYNOPSIS_QUERY_EMBEDDING_BATCH_SIZE",
        "SYNOPSIS_LOCAL_OLLAMA_NUM_PARALLEL",
    ],
)
def test_api_limits_are_at_least_one(variable: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        Settings.from_env({variable: "0"})
    assert str(caught.value) == f"{variable} must be at least 1"


def test_the_api_k_limit_cannot_exceed_what_a_search_returns() -> None:
    assert Settings.from_env({"SYNOPSIS_API_MAX_K": "100"}).api_limits.max_k == 100
    with pytest.raises(ConfigurationError) as caught:
        Settings.from_env({"SYNOPSIS_API_MAX_K": "101"})
    assert str(caught.value) == (
        "SYNOPSIS_API_MAX_K must be at most 100 (the most hits one search returns)"
    )


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("SYNOPSIS_SEARCH_SUMMARY_WEIGHT", "1.5", "must be between 0 and 1"),
        ("SYNOPSIS_SEARCH_SUMMARY_KEYWORD_WEIGHT", "-0.1", "must be between 0 and 1"),
    ],
)
def test_joint_search_settings_are_checked(variable: str, value: str, message: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        Settings.from_env({variable: value})
    assert str(caught.value) == f"{variable} {message}"


def test_keys_stay_out_of_the_settings_repr() -> None:
    settings = Settings().with_overrides(
        api_read_keys="read-secret", api_write_keys="write-secret", weaviate_api_key="wv-secret"
    )
    for text in (repr(settings), str(settings)):
        assert "read-secret" not in text
        assert "write-secret" not in text
        assert "wv-secret" not in text


def test_other_variables_are_ignored() -> None:
    environ = {"WEAVIATE_URL": "http://x", "SYNOPSIS_UNKNOWN": "1", "synopsis_chat_model": "x"}
    assert Settings.from_env(environ) == Settings()


def test_reads_os_environ_only_when_no_mapping_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYNOPSIS_CHAT_MODEL", "from-os-environ")
    assert Settings.from_env().models.chat_model == "from-os-environ"
    assert Settings.from_env({}).models.chat_model == "qwen2.5-coder-1.5b-instruct"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"SYNOPSIS_LOCAL_WEAVIATE_GRPC_PORT": "18080"},
            "SYNOPSIS_LOCAL_WEAVIATE_GRPC_PORT and SYNOPSIS_LOCAL_WEAVIATE_PORT are both "
            "port 18080; the local stack needs distinct ports (Weaviate's cluster uses its "
            "HTTP port + 1…4)",
        ),
        (
            {"SYNOPSIS_LOCAL_OLLAMA_PORT": "18082"},
            "SYNOPSIS_LOCAL_OLLAMA_PORT and SYNOPSIS_LOCAL_WEAVIATE_PORT + 2 are both port "
            "18082; the local stack needs distinct ports (Weaviate's cluster uses its HTTP "
            "port + 1…4)",
        ),
        (
            {"SYNOPSIS_LOCAL_WEAVIATE_PORT": "65534"},
            "SYNOPSIS_LOCAL_WEAVIATE_PORT + 2: port 65536 is not between 1 and 65535",
        ),
        ({"SYNOPSIS_LOCAL_OLLAMA_PORT": "0"}, "SYNOPSIS_LOCAL_OLLAMA_PORT: port 0 is not"),
    ],
)
def test_local_ports_must_be_distinct_and_valid(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        Settings.from_env(env)
    assert str(caught.value).startswith(message)


def test_replication_defaults_change_nothing() -> None:
    settings = Settings.from_env({})
    assert (settings.stack.weaviate_nodes, settings.external.replication_factor) == (1, 1)
    assert (settings.external.read_consistency, settings.external.write_consistency) == (
        "QUORUM",
        "QUORUM",
    )


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"SYNOPSIS_WEAVIATE_NODES": "2"},
            "SYNOPSIS_WEAVIATE_NODES=2: the local stack runs 1 Weaviate node or a cluster of 3",
        ),
        ({"SYNOPSIS_REPLICATION_FACTOR": "0"}, "SYNOPSIS_REPLICATION_FACTOR must be at least 1"),
        (
            {"SYNOPSIS_REPLICATION_FACTOR": "3"},
            "SYNOPSIS_REPLICATION_FACTOR=3 needs as many Weaviate nodes, but the local stack "
            "runs 1; set SYNOPSIS_WEAVIATE_NODES=3 (or use an external cluster)",
        ),
        (
            {"SYNOPSIS_READ_CONSISTENCY": "quorum"},
            "SYNOPSIS_READ_CONSISTENCY='quorum' is not one of ONE, QUORUM, ALL",
        ),
        (
            {"SYNOPSIS_WRITE_CONSISTENCY": "TWO"},
            "SYNOPSIS_WRITE_CONSISTENCY='TWO' is not one of ONE, QUORUM, ALL",
        ),
        (
            # Node 1 of the cluster takes 18090 (node 0's HTTP port + 10).
            {"SYNOPSIS_WEAVIATE_NODES": "3", "SYNOPSIS_LOCAL_OLLAMA_PORT": "18090"},
            "SYNOPSIS_LOCAL_OLLAMA_PORT and SYNOPSIS_LOCAL_WEAVIATE_PORT + 10 are both port "
            "18090; the local stack needs distinct ports (Weaviate's cluster uses its HTTP "
            "port + 1…4, node i of a cluster its HTTP and gRPC ports + 10·i)",
        ),
        (
            {"SYNOPSIS_WEAVIATE_NODES": "3", "SYNOPSIS_LOCAL_WEAVIATE_GRPC_PORT": "18101"},
            "SYNOPSIS_LOCAL_WEAVIATE_PORT + 21 and SYNOPSIS_LOCAL_WEAVIATE_GRPC_PORT are both "
            "port 18101; the local stack needs distinct ports (Weaviate's cluster uses its "
            "HTTP port + 1…4, node i of a cluster its HTTP and gRPC ports + 10·i)",
        ),
        (
            {"SYNOPSIS_WEAVIATE_NODES": "3", "SYNOPSIS_LOCAL_WEAVIATE_GRPC_PORT": "65520"},
            "SYNOPSIS_LOCAL_WEAVIATE_GRPC_PORT + 20: port 65540 is not between 1 and 65535",
        ),
    ],
)
def test_replication_settings_are_checked(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        Settings.from_env(env)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("env", "nodes", "factor"),
    [
        ({"SYNOPSIS_WEAVIATE_NODES": "3", "SYNOPSIS_REPLICATION_FACTOR": "3"}, 3, 3),
        ({"SYNOPSIS_WEAVIATE_NODES": "3", "SYNOPSIS_REPLICATION_FACTOR": "2"}, 3, 2),
        # An external Weaviate: the cluster's size is not known here.
        ({"SYNOPSIS_WEAVIATE_URL": "http://w:8080", "SYNOPSIS_REPLICATION_FACTOR": "3"}, 1, 3),
    ],
)
def test_replication_factor_within_the_nodes(env: dict[str, str], nodes: int, factor: int) -> None:
    settings = Settings.from_env(env)
    assert (settings.stack.weaviate_nodes, settings.external.replication_factor) == (nodes, factor)


@pytest.mark.parametrize(
    ("index", "ports"),
    [
        (0, {"http": 18080, "grpc": 15051, "gossip": 18081, "data": 18082, "raft": 18083}),
        (1, {"http": 18090, "grpc": 15061, "gossip": 18091, "data": 18092, "raft": 18093}),
        (2, {"http": 18100, "grpc": 15071, "gossip": 18101, "data": 18102, "raft": 18103}),
    ],
)
def test_local_weaviate_node_ports(index: int, ports: dict[str, int]) -> None:
    derived = Settings().with_overrides(weaviate_nodes=3).stack.local_weaviate_node_ports(index)
    assert derived == {**ports, "raft rpc": ports["raft"] + 1}


def test_the_answer_model_is_its_own_default_and_empty_means_the_chat_model() -> None:
    assert Settings().models.resolved_answer_model == "qwen2.5-coder-0.5b-instruct"
    empty = Settings.from_env({"SYNOPSIS_ANSWER_MODEL": "", "SYNOPSIS_CHAT_MODEL": "x"})
    assert (empty.models.answer_model, empty.models.resolved_answer_model) == ("", "x")
    settings = Settings.from_env({"SYNOPSIS_ANSWER_MODEL": "llama3.1", "SYNOPSIS_CHAT_MODEL": "x"})
    assert (settings.models.answer_model, settings.models.resolved_answer_model) == (
        "llama3.1",
        "llama3.1",
    )
    assert Settings.from_env({"SYNOPSIS_CHAT_MODEL": "x"}).models.resolved_answer_model == (
        "qwen2.5-coder-0.5b-instruct"
    )


@pytest.mark.parametrize("raw", ["-0.1", "1.5"])
def test_answer_min_support_is_a_share(raw: str) -> None:
    with pytest.raises(ConfigurationError, match="SYNOPSIS_ANSWER_MIN_SUPPORT must be between"):
        Settings.from_env({"SYNOPSIS_ANSWER_MIN_SUPPORT": raw})


def _as_variable(value: object) -> str:
    """A field's value as its environment variable would spell it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def test_every_field_is_read_from_its_own_variable() -> None:
    """Each field has a `SYNOPSIS_*` variable, and its default written there reads back."""
    defaults = Settings()
    names = Settings.env_names()
    assert len(set(names.values())) == len(names)
    for field, variable in names.items():
        assert variable == "SYNOPSIS_" + field.upper()
        default = defaults.value(field)
        assert Settings.from_env({variable: _as_variable(default)}) == defaults, variable


def test_settings_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Settings().models.chat_model = "other"  # type: ignore[misc]


#: Every field that takes one of a fixed set of values, with exactly those values.
CHOICES = {
    "read_consistency": ("ONE", "QUORUM", "ALL"),
    "write_consistency": ("ONE", "QUORUM", "ALL"),
    "summary_prompt_version": ("v2", "v3-retrieval", "v4-questions", "v5-summary-questions"),
    "search_mode": ("joint", "summaries", "originals", "both", "fused"),
    "search_summary_vector": ("context", "summary"),
    "conversation_rewrite": ("model", "previous", "none"),
}


def test_the_fields_with_fixed_values() -> None:
    assert Settings.choices() == CHOICES


@pytest.mark.parametrize(
    ("field", "value"),
    [(field, value) for field, values in CHOICES.items() for value in values],
)
def test_each_allowed_value_is_read(field: str, value: str) -> None:
    variable = Settings.env_names()[field]
    assert Settings.from_env({variable: value}).value(field) == value
    assert Settings().with_overrides(**{field: value}).value(field) == value


@pytest.mark.parametrize(
    ("variable", "raw", "message"),
    [
        (
            "SYNOPSIS_SEARCH_MODE",
            "jiont",
            "SYNOPSIS_SEARCH_MODE='jiont' is not one of joint, summaries, originals, both, fused",
        ),
        (
            "SYNOPSIS_SEARCH_SUMMARY_VECTOR",
            "both",
            "SYNOPSIS_SEARCH_SUMMARY_VECTOR='both' is not one of context, summary",
        ),
        (
            "SYNOPSIS_CONVERSATION_REWRITE",
            "Model",
            "SYNOPSIS_CONVERSATION_REWRITE='Model' is not one of model, previous, none",
        ),
        (
            "SYNOPSIS_SUMMARY_PROMPT_VERSION",
            "v3",
            "SYNOPSIS_SUMMARY_PROMPT_VERSION='v3' is not one of "
            "v2, v3-retrieval, v4-questions, v5-summary-questions",
        ),
        (
            "SYNOPSIS_READ_CONSISTENCY",
            "",
            "SYNOPSIS_READ_CONSISTENCY='' is not one of ONE, QUORUM, ALL",
        ),
        (
            "SYNOPSIS_WRITE_CONSISTENCY",
            " all ",
            "SYNOPSIS_WRITE_CONSISTENCY='all' is not one of ONE, QUORUM, ALL",
        ),
    ],
)
def test_a_value_outside_the_choices_is_refused_at_once(
    variable: str, raw: str, message: str
) -> None:
    with pytest.raises(ConfigurationError) as caught:
        Settings.from_env({variable: raw})
    assert str(caught.value) == message


@pytest.mark.parametrize("field", sorted(CHOICES))
def test_a_direct_construction_outside_the_choices_is_refused(field: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        Settings().with_overrides(**{field: "nonsense"})
    assert str(caught.value).startswith(f"{Settings.env_names()[field]}='nonsense' is not one of")


def test_the_choices_are_what_the_code_serves() -> None:
    """The prompt versions are those with a prompt, the search modes those search runs."""
    assert set(PROMPT_VERSIONS) == set(PROMPTS)
    assert CHOICES["search_mode"] == MODES


def test_every_field_says_what_it_does_in_one_line() -> None:
    """A new field needs `setting(default, "what it does")`: docs/configuration.md shows it."""
    for name, description in Settings.descriptions().items():
        assert description, f"{name} has no description"
        assert "\n" not in description, name
        assert description.endswith("."), name


def test_every_field_is_in_exactly_one_topic() -> None:
    """A new field needs a place in `TOPICS`, which docs/configuration.md follows."""
    listed = [name for members in TOPICS.values() for name in members]
    assert sorted(listed) == sorted(Settings.env_names())


def test_with_overrides_changes_only_the_named_settings() -> None:
    base = Settings()
    changed = base.with_overrides(jobs_workers=0, chat_model="x", weaviate_nodes=3)
    assert (changed.jobs.workers, changed.models.chat_model, changed.stack.weaviate_nodes) == (
        0,
        "x",
        3,
    )
    untouched = set(Settings.env_names()) - {"jobs_workers", "chat_model", "weaviate_nodes"}
    assert all(changed.value(name) == base.value(name) for name in untouched)


def test_with_overrides_refuses_a_name_that_is_no_setting() -> None:
    with pytest.raises(TypeError, match="no such settings: chat, workers"):
        Settings().with_overrides(chat="x", workers=2)


def test_with_overrides_checks_as_from_env_does() -> None:
    with pytest.raises(ConfigurationError) as caught:
        Settings().with_overrides(jobs_poll_seconds=20.0)
    assert str(caught.value).startswith(
        "SYNOPSIS_JOBS_POLL_SECONDS must be more than 0 and less than a third of "
        "SYNOPSIS_JOBS_LEASE_SECONDS"
    )
    with pytest.raises(ConfigurationError, match="SYNOPSIS_REPLICATION_FACTOR=3 needs"):
        Settings().with_overrides(replication_factor=3)


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("jobs_workers", "jobs.workers"),
        ("conversations_per_key", "conversations.per_key"),
        ("summary_guard", "guard.enabled"),
        ("stack_start_timeout", "stack.start_timeout"),
        ("max_vector_distance", "search.max_vector_distance"),
        ("api_max_k", "api_limits.max_k"),
        ("chat_model", "models.chat_model"),
    ],
)
def test_where_a_setting_lives(name: str, path: str) -> None:
    assert Settings.paths()[name] == path


def test_the_sections_are_the_topics_in_the_order_of_the_docs() -> None:
    assert list(TOPICS) == [
        "Local stack",
        "External Weaviate and Ollama, replication",
        "Deadlines of outbound calls",
        "Models",
        "Chunking and ingest",
        "Summaries",
        "Summary guard",
        "URL sources",
        "Loader limits",
        "Search",
        "Answers",
        "Conversations",
        "HTTP API",
        "HTTP API limits",
        "Ingest jobs",
        "Retention",
    ]
