"""Point Evergreen's web providers at the loopback fakes (Tavily, OpenAI, a web site)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.tavily_server import FakeTavily


def use_loopback_providers(
    monkeypatch: pytest.MonkeyPatch,
    *,
    tavily: FakeTavily,
    tavily_key: str,
    llm: FakeOpenAI,
    openai_key: str,
    home: Path,
    browser: str = "http",
) -> None:
    """Environment for a web report against 127.0.0.1: keys, endpoints, the address
    allowlist, no politeness delay, every page fetched (no raw content from search), and
    no configuration file from the developer's workspace."""
    env = {
        "TAVILY_API_KEY": tavily_key,
        "TAVILY_BASE_URL": tavily.url,
        "OPENAI_API_KEY": openai_key,
        "OPENAI_BASE_URL": llm.base_url,
        "EVERGREEN_FETCH_ALLOWLIST": "127.0.0.1",
        "EVERGREEN_FETCH_DELAY": "0",
        "EVERGREEN_FETCH_BROWSER": browser,
        "EVERGREEN_TAVILY_RAW_CONTENT": "false",
        "EVERGREEN_CONFIG": str(home / "none.toml"),
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
