"""Settings from the environment that make no sense are refused in one line, naming the
variable, before any work starts (issue 45, item 6): a negative byte cap, a timeout of 0,
a budget that is not a number."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import EvergreenError
from core.settings import get_settings


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("EVERGREEN_FETCH_MAX_BYTES", "-1"),
        ("EVERGREEN_FETCH_MAX_BYTES", "0"),
        ("EVERGREEN_FETCH_TIMEOUT", "0"),
        ("EVERGREEN_FETCH_TIMEOUT", "-5"),
        ("EVERGREEN_FETCH_TIMEOUT", "inf"),
        ("EVERGREEN_LLM_TIMEOUT", "0"),
        ("EVERGREEN_BUDGET_USD", "nan"),
        ("EVERGREEN_BUDGET_USD", "-1"),
        ("EVERGREEN_BUDGET_TOKENS", "-100"),
    ],
)
def test_a_setting_out_of_its_range_is_refused_by_name(
    name: str, value: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("EVERGREEN_HOME", str(tmp_path))
    monkeypatch.setenv(name, value)
    with pytest.raises(EvergreenError) as caught:
        get_settings()
    message = str(caught.value)
    assert message.startswith(f"Invalid setting {name}:") and "\n" not in message


@pytest.mark.parametrize(
    ("name", "value", "field", "expected"),
    [
        ("EVERGREEN_FETCH_MAX_BYTES", "1000", "fetch_max_bytes", 1000),
        ("EVERGREEN_FETCH_TIMEOUT", "2.5", "fetch_timeout", 2.5),
        ("EVERGREEN_BUDGET_USD", "0", "budget_usd", 0.0),
        ("EVERGREEN_BUDGET_TOKENS", "0", "budget_tokens", 0),
    ],
)
def test_a_setting_in_its_range_is_taken(
    name: str,
    value: str,
    field: str,
    expected: float,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("EVERGREEN_HOME", str(tmp_path))
    monkeypatch.setenv(name, value)
    assert getattr(get_settings(), field) == expected
