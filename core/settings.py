"""Configuration in one place: environment variables, an optional TOML file, and
(in the app) Streamlit secrets — in that order of precedence.

Secrets are ``SecretStr``: they never print, and `describe()` shows only whether
each key is set. Per-report choices (τ, concurrency, schedule, writer) live on the
report itself (``Report.settings``, typed by ``core.domain.report_settings``), not here.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from core import config
from core.domain.report_settings import WriterName
from core.errors import EvergreenError
from core.redact import redact_credentials


class Price(BaseModel):
    """US dollars per million tokens."""

    input: float = 0.0
    output: float = 0.0
    cached_input: float = 0.0


DEFAULT_PRICES: dict[str, Price] = {
    "gpt-4o-mini": Price(input=0.15, output=0.60, cached_input=0.075),
    "gpt-4o": Price(input=2.50, output=10.00, cached_input=1.25),
    "gpt-4.1-mini": Price(input=0.40, output=1.60, cached_input=0.10),
}


def _env(*names: str) -> Any:
    return Field(default=None, validation_alias=AliasChoices(*names))


class Settings(BaseSettings):
    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    llm: WriterName = Field(
        default="offline", validation_alias=AliasChoices("EVERGREEN_LLM", "llm")
    )
    openai_api_key: SecretStr | None = _env("OPENAI_API_KEY", "openai_api_key")
    openai_base_url: str | None = _env("OPENAI_BASE_URL", "openai_base_url")
    model_planner: str = Field(
        default="gpt-4o-mini",
        validation_alias=AliasChoices("EVERGREEN_MODEL_PLANNER", "model_planner"),
    )
    model_writer: str = Field(
        default="gpt-4o-mini",
        validation_alias=AliasChoices("EVERGREEN_MODEL_WRITER", "model_writer"),
    )
    model_summariser: str = Field(
        default="gpt-4o-mini",
        validation_alias=AliasChoices("EVERGREEN_MODEL_SUMMARISER", "model_summariser"),
    )
    llm_timeout: float = Field(
        default=60.0,
        gt=0,
        allow_inf_nan=False,
        validation_alias=AliasChoices("EVERGREEN_LLM_TIMEOUT", "llm_timeout"),
    )
    budget_tokens: int | None = Field(
        default=None,
        ge=0,
        validation_alias=AliasChoices("EVERGREEN_BUDGET_TOKENS", "budget_tokens"),
    )
    budget_usd: float | None = Field(
        default=None,
        ge=0,
        allow_inf_nan=False,
        validation_alias=AliasChoices("EVERGREEN_BUDGET_USD", "budget_usd"),
    )
    tavily_api_key: SecretStr | None = _env("TAVILY_API_KEY", "tavily_api_key")
    tavily_base_url: str | None = _env("TAVILY_BASE_URL", "tavily_base_url")
    fetch_allowlist: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        validation_alias=AliasChoices("EVERGREEN_FETCH_ALLOWLIST", "fetch_allowlist"),
        description="Hosts or CIDR ranges allowed despite the private-address policy "
        "(comma-separated in the environment, e.g. '127.0.0.1,intranet.example,10.0.0.0/8').",
    )
    prices: dict[str, Price] = Field(default_factory=lambda: dict(DEFAULT_PRICES))
    # -- web search and fetching (source "web") ------------------------------------------
    tavily_raw_content: bool = Field(
        default=True,
        validation_alias=AliasChoices("EVERGREEN_TAVILY_RAW_CONTENT", "tavily_raw_content"),
        description="Ask Tavily for each hit's page text, saving a fetch in the same run.",
    )
    fetch_browser: Literal["auto", "chromium", "http"] = Field(
        default="auto",
        validation_alias=AliasChoices("EVERGREEN_FETCH_BROWSER", "fetch_browser"),
        description="auto: Chromium if installed, else plain HTTP; chromium: require it.",
    )
    chromium_path: str | None = _env("EVERGREEN_CHROMIUM", "chromium_path")
    fetch_timeout: float = Field(
        default=30.0,
        gt=0,
        allow_inf_nan=False,
        validation_alias=AliasChoices("EVERGREEN_FETCH_TIMEOUT", "fetch_timeout"),
    )
    fetch_max_bytes: int = Field(
        default=5_000_000,
        ge=1,
        validation_alias=AliasChoices("EVERGREEN_FETCH_MAX_BYTES", "fetch_max_bytes"),
    )
    fetch_per_host: int = Field(
        default=2, ge=1, validation_alias=AliasChoices("EVERGREEN_FETCH_PER_HOST", "fetch_per_host")
    )
    fetch_delay: float = Field(
        default=0.5,
        ge=0,
        validation_alias=AliasChoices("EVERGREEN_FETCH_DELAY", "fetch_delay"),
        description="Seconds between two requests to the same host (politeness).",
    )
    recheck_hours: float = Field(
        default=4.0,
        ge=0,
        validation_alias=AliasChoices("EVERGREEN_RECHECK_HOURS", "recheck_hours"),
        description="A web page checked for one report within this many hours serves every "
        "report citing it without another request (0: every update asks again).",
    )

    # -- workers (PostgreSQL: core.engine.queue) -----------------------------------------------
    worker_heartbeat: float = Field(
        default=10.0,
        gt=0,
        validation_alias=AliasChoices("EVERGREEN_WORKER_HEARTBEAT", "worker_heartbeat"),
        description="Seconds between a worker's heartbeats.",
    )
    worker_stalled: float = Field(
        default=30.0,
        gt=0,
        validation_alias=AliasChoices("EVERGREEN_WORKER_STALLED", "worker_stalled"),
        description="A worker silent this many seconds is taken for dead; its run is queued again.",
    )
    worker_poll: float = Field(
        default=5.0,
        gt=0,
        validation_alias=AliasChoices("EVERGREEN_WORKER_POLL", "worker_poll"),
        description="Seconds between a worker's looks for jobs (besides LISTEN/NOTIFY).",
    )
    schedule_cron: str = Field(
        default="*/5 * * * *",
        validation_alias=AliasChoices("EVERGREEN_SCHEDULE_CRON", "schedule_cron"),
        description="When the workers look for due reports (a cron line; a sixth field for "
        "seconds).",
    )

    @field_validator("fetch_allowlist", mode="before")
    @classmethod
    def _split_allowlist(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().startswith("["):
            return json.loads(value)
        if isinstance(value, str):
            return [part.strip() for part in value.replace(";", ",").split(",") if part.strip()]
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml = TomlConfigSettingsSource(settings_cls, toml_file=config_file())
        return (env_settings, init_settings, toml)

    def price_for(self, model: str) -> Price:
        return self.prices.get(model, Price())

    def describe(self) -> dict[str, Any]:
        """What the Settings screen and `evergreen config` show: never a key's value, nor
        credentials inside an endpoint URL."""
        return {
            "writer": self.llm,
            "openai_base_url": redact_credentials(self.openai_base_url or "(OpenAI default)"),
            "openai_api_key": "set" if self.openai_api_key else "not set",
            "models": {
                "planner": self.model_planner,
                "writer": self.model_writer,
                "summariser": self.model_summariser,
            },
            "tavily_api_key": "set" if self.tavily_api_key else "not set",
            "web_search": "tavily" if self.tavily_api_key else "off",
            "fetch_allowlist": self.fetch_allowlist,
            "fetch": {
                "browser": self.fetch_browser,
                "timeout": self.fetch_timeout,
                "max_bytes": self.fetch_max_bytes,
                "per_host": self.fetch_per_host,
                "delay": self.fetch_delay,
                "recheck_hours": self.recheck_hours,
            },
            "budget": {"tokens": self.budget_tokens, "usd": self.budget_usd},
            "config_file": str(config_file()),
        }


def config_file() -> Path:
    """``$EVERGREEN_CONFIG``, else ``evergreen.toml`` in the workspace."""
    return Path(config.value("EVERGREEN_CONFIG") or config.workspace_dir() / "evergreen.toml")


@lru_cache(maxsize=1)
def _cached(key: tuple[tuple[str, str], ...], supplied: tuple[tuple[str, str], ...]) -> Settings:
    return _load(dict(supplied))


def _load(overrides: dict[str, Any]) -> Settings:
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "settings"
        raise EvergreenError(f"Invalid setting {where}: {first.get('msg')}.") from None
    except (OSError, ValueError) as exc:
        raise EvergreenError(f"Cannot read {config_file()}: {exc}") from None


def get_settings(overrides: dict[str, Any] | None = None) -> Settings:
    """Current settings: the environment, then ``overrides`` and the values the app
    supplied from its secrets (``apply_secrets``), then the TOML file."""
    supplied = config.supplied()
    if overrides:
        return _load({**supplied, **overrides})
    key = tuple(sorted((k, v) for k, v in os.environ.items() if k.isupper()))
    return _cached(key, tuple(sorted(supplied.items())))


SECRET_PREFIXES = ("OPENAI_", "TAVILY_", "EVERGREEN_")


def apply_secrets(secrets: Mapping[str, Any]) -> list[str]:
    """Let the app's Streamlit secrets supply settings the environment does not set.

    Only Evergreen's own names (OPENAI_*, TAVILY_*, EVERGREEN_*) are taken, and a value
    already in the environment wins. They are handed to ``core.config.supply`` — the
    process environment is left as it is. Returns the names applied (never their values).
    """
    taken = {
        name: str(value)
        for name, value in secrets.items()
        if name.startswith(SECRET_PREFIXES)
        and name not in os.environ
        and isinstance(value, str | int | float | bool)
    }
    config.supply(taken)
    return sorted(taken)
