"""A series of periodic pages (quarterly recaps) is quoted in time order."""

from __future__ import annotations

import re

from core.domain.periods import in_period_order, period_of, series_name
from core.writers.base import Evidence
from core.writers.offline import OfflineWriter


def test_the_period_a_title_names() -> None:
    assert period_of("Q3 2026 storage market recap") == (2026, 9)
    assert period_of("H1 2026 outlook") == (2026, 6)
    assert period_of("Grid report, March 2026") == (2026, 3)
    assert period_of("LFP cell prices in 2025: a year in review") == (2025, 12)
    assert period_of("Python 3.12 Release Schedule") is None  # a version, not a period
    assert period_of("RFC 3339 timestamps") is None  # no year: a number
    assert series_name("Q1 2026 storage market recap") == "storage market recap"


def test_a_series_takes_the_places_its_members_held_in_time_order() -> None:
    ranked = [
        "Q4 2025 storage market recap",
        "Harrow Bay Battery",
        "Q2 2026 storage market recap",
        "Q1 2026 storage market recap",
        "Annual report 2024",  # a period, but alone in its series: stays
    ]
    assert in_period_order(ranked, str) == [
        "Q4 2025 storage market recap",
        "Harrow Bay Battery",
        "Q1 2026 storage market recap",
        "Q2 2026 storage market recap",
        "Annual report 2024",
    ]


NEWS = {
    "Q4 2025": "closed a record year, with the Kestrel Flats battery energised in November",
    "Q1 2026": "brought final capacity accreditation rules and a sodium-ion product launch",
    "Q3 2026": "saw the first long-duration storage contracts and a national safety standard",
}


def _recap(marker: int, quarter: str, rank: int) -> Evidence:
    text = f"For battery storage in the Halvard grid, {quarter} {NEWS[quarter]}."
    return Evidence(
        marker, f"https://ex.org/{marker}", f"{quarter} storage market recap", text, rank
    )


def test_the_offline_writer_quotes_a_series_in_time_order() -> None:
    # ranked by relevance: the most recent quarter first, then the oldest
    evidence = [_recap(1, "Q3 2026", 0), _recap(2, "Q4 2025", 1), _recap(3, "Q1 2026", 2)]
    draft = OfflineWriter().write_section(
        "How is battery storage developing in the Halvard grid?", "Storage market recap", evidence
    )
    quarters = re.findall(r"grid, (Q\d \d{4})", draft.body)
    assert quarters == ["Q4 2025", "Q1 2026", "Q3 2026"], draft.body
