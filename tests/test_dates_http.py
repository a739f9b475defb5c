"""HTTP dates and Retry-After: one reader for the web fetcher, the model client and feeds."""

from __future__ import annotations

from datetime import UTC, datetime

from core.dates import http_date, retry_after_seconds

NOW = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert retry_after_seconds("7", now=NOW) == 7.0
    assert retry_after_seconds("Tue, 01 Dec 2026 12:00:30 GMT", now=NOW) == 30.0
    assert retry_after_seconds("Tue, 01 Dec 2026 11:00:00 GMT", now=NOW) == 0.0  # past: now
    assert retry_after_seconds("-3", now=NOW) == 0.0
    assert retry_after_seconds("soon", now=NOW) is None
    assert retry_after_seconds(None, now=NOW) is None and retry_after_seconds("") is None


def test_http_dates_are_utc_aware_and_unreadable_ones_are_none() -> None:
    assert http_date("Tue, 01 Dec 2026 12:00:30 GMT") == datetime(
        2026, 12, 1, 12, 0, 30, tzinfo=UTC
    )
    assert http_date("Tue, 01 Dec 2026 14:00:30 +0200") == datetime(
        2026, 12, 1, 12, 0, 30, tzinfo=UTC
    )
    assert http_date("not a date") is None and http_date(None) is None
