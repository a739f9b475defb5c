"""Configuration reaches the core explicitly (``core.config``): the CLI's ``--db``, the
app's secrets and the benchmark's databases never go through ``os.environ``."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from core import config
from core.cli.console import app
from core.settings import apply_secrets, get_settings
from core.store.db import session_scope
from core.store.repository import list_reports

CORE = Path(__file__).resolve().parents[1] / "core"


def test_the_db_option_reaches_the_database_without_writing_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv(config.ENV_HOME, str(home))
    monkeypatch.delenv(config.ENV_DB, raising=False)
    chosen = tmp_path / "elsewhere" / "chosen.db"
    before = dict(os.environ)
    result = CliRunner().invoke(app, ["--db", str(chosen), "demo", "--json"])
    assert result.exit_code == 0, result.output
    assert dict(os.environ) == before  # nothing written, nothing left behind
    assert chosen.exists() and not (home / "evergreen.db").exists()
    with session_scope(f"sqlite:///{chosen}") as session:
        assert [r.title for r in list_reports(session)]  # the sample report went there
    # the choice lasted as long as the command: the next one uses the default again
    assert config.database_url() == f"sqlite:///{home / 'evergreen.db'}"


def test_a_door_s_choice_wins_over_the_environment_and_secrets_lose_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("core.config._supplied", {})
    monkeypatch.setenv(config.ENV_DB, str(tmp_path / "env.db"))
    with config.overriding(config.ENV_DB, str(tmp_path / "door.db")):
        assert config.database_url() == f"sqlite:///{tmp_path / 'door.db'}"
    assert config.database_url() == f"sqlite:///{tmp_path / 'env.db'}"
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    monkeypatch.setenv("EVERGREEN_MODEL_WRITER", "from-env")
    before = dict(os.environ)
    applied = apply_secrets(
        {"TAVILY_API_KEY": "tvly-secret", "EVERGREEN_MODEL_WRITER": "from-secrets", "X": "1"}
    )
    assert applied == ["TAVILY_API_KEY"] and dict(os.environ) == before
    settings = get_settings()
    assert settings.tavily_api_key is not None and settings.model_writer == "from-env"
    assert config.value("TAVILY_API_KEY") == "tvly-secret"


def test_nothing_in_core_writes_the_environment() -> None:
    writes = re.compile(r"os\.environ\[[^\]]+\]\s*=|os\.environ\.(update|setdefault|pop)\(|putenv")
    found = [
        f"{path.relative_to(CORE)}:{n}"
        for path in CORE.rglob("*.py")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if writes.search(line)
    ]
    # crawl4ai's own switch for its cloud notice, set for the library (not our configuration)
    assert [f for f in found if not f.startswith("sources/web.py")] == []


def test_the_workers_timings_and_schedule_are_settings_like_any_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workers' heartbeat, stall limit, poll and schedule come from the environment
    or ``evergreen.toml`` through the one Settings, each checked with one clear line."""
    from core.engine.queue import heartbeat_seconds, stalled_seconds
    from core.errors import EvergreenError

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv(config.ENV_HOME, str(home))
    for name in ("HEARTBEAT", "STALLED", "POLL"):
        monkeypatch.delenv(f"EVERGREEN_WORKER_{name}", raising=False)
    monkeypatch.delenv("EVERGREEN_SCHEDULE_CRON", raising=False)
    (home / "evergreen.toml").write_text(
        'worker_stalled = 45\nschedule_cron = "0 6 * * *"\n', encoding="utf-8"
    )
    assert stalled_seconds() == 45.0 and get_settings().schedule_cron == "0 6 * * *"
    assert heartbeat_seconds() == 10.0  # the default
    monkeypatch.setenv("EVERGREEN_WORKER_STALLED", "12")  # the environment wins
    assert stalled_seconds() == 12.0
    monkeypatch.setenv("EVERGREEN_WORKER_HEARTBEAT", "0")
    with pytest.raises(EvergreenError, match="EVERGREEN_WORKER_HEARTBEAT.*greater than 0"):
        heartbeat_seconds()
