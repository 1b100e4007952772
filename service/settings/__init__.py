"""The one settings object of Synopsis, loaded from `SYNOPSIS_*` environment variables.

`Settings` is composed of sections, one per topic of docs/configuration.md:
`settings.stack`, `.external`, `.deadlines`, `.models`, `.ingest`, `.summaries`, `.guard`,
`.urls`, `.loader_limits`, `.search`, `.answers`, `.conversations`, `.api`, `.api_limits`,
`.jobs` and `.retention`. Library code receives a `Settings`; only `Settings.from_env`
reads the environment. Build one with `Settings.from_env()`, or `Settings()` for the
defaults, and change a few settings with `settings.with_overrides(jobs_workers=0, ...)`,
by the names their variables have (`SYNOPSIS_JOBS_WORKERS`).
"""

from __future__ import annotations

from service.settings.answers import ANSWER_MAX_K, AnswerSettings
from service.settings.api import ApiSettings
from service.settings.api_limits import MAX_K, ApiLimits
from service.settings.composed import TOPICS, Settings
from service.settings.conversations import REWRITE_METHODS, ConversationSettings, RewriteMethod
from service.settings.deadlines import DeadlineSettings
from service.settings.external import CONSISTENCY_LEVELS, ConsistencyLevel, ExternalSettings
from service.settings.fields import ENV_PREFIX, Section, setting, setting_from
from service.settings.guard import GuardSettings
from service.settings.ingest import IngestSettings
from service.settings.jobs import JobSettings
from service.settings.loader_limits import LOADER_LIMITS, LoaderLimits
from service.settings.models import ModelSettings
from service.settings.retention import RetentionSettings
from service.settings.search import (
    MAX_CONTEXT_TOKENS,
    MIN_CONTEXT_TOKENS,
    SUMMARY_VECTORS,
    SearchSettings,
)
from service.settings.stack import WEAVIATE_NODE_PORT_STRIDE, StackSettings
from service.settings.summaries import PROMPT_VERSIONS, PromptVersion, SummarySettings
from service.settings.urls import UrlSettings

__all__ = [
    "ANSWER_MAX_K",
    "CONSISTENCY_LEVELS",
    "ENV_PREFIX",
    "LOADER_LIMITS",
    "MAX_CONTEXT_TOKENS",
    "MAX_K",
    "MIN_CONTEXT_TOKENS",
    "PROMPT_VERSIONS",
    "REWRITE_METHODS",
    "SUMMARY_VECTORS",
    "TOPICS",
    "WEAVIATE_NODE_PORT_STRIDE",
    "AnswerSettings",
    "ApiLimits",
    "ApiSettings",
    "ConsistencyLevel",
    "ConversationSettings",
    "DeadlineSettings",
    "ExternalSettings",
    "GuardSettings",
    "IngestSettings",
    "JobSettings",
    "LoaderLimits",
    "ModelSettings",
    "PromptVersion",
    "RetentionSettings",
    "RewriteMethod",
    "SearchSettings",
    "Section",
    "Settings",
    "StackSettings",
    "SummarySettings",
    "UrlSettings",
    "setting",
    "setting_from",
]
