"""Dates as Evergreen understands them: UTC instants, parsed strictly from user input.

A bare date given as an "as of" means the end of that day (23:59:59 UTC), so a
report "as of 2023-12-31" sees everything published on that day. A bare date
given as a publication date means the start of that day.
"""

from __future__ import annotations

import email.utils
from datetime import UTC, date, datetime, time

from core.errors import EvergreenError

_HINT = "use YYYY-MM-DD or an ISO-8601 timestamp such as 2025-12-31T23:59:59Z"


def utcnow() -> datetime:
    """The current instant, timezone-aware UTC (how instants are stored)."""
    return datetime.now(UTC).replace(microsecond=0)


def _parse(value: str | date | datetime, *, end_of_day: bool) -> datetime:
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, date):
        dt = datetime.combine(value, time(23, 59, 59) if end_of_day else time(0, 0, 0))
    else:
        text = str(value).strip()
        if not text:
            raise EvergreenError(f"Missing date: {_HINT}.")
        try:
            if len(text) == 10:
                d = date.fromisoformat(text)
                dt = datetime.combine(d, time(23, 59, 59) if end_of_day else time(0, 0, 0))
            else:
                dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise EvergreenError(f"Invalid date {text!r}: {_HINT}.") from None
    dt = dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)
    if not 1900 <= dt.year <= 2200:
        raise EvergreenError(f"Date out of range: {dt.date().isoformat()}.")
    return dt.replace(microsecond=0)


def parse_as_of(value: str | date | datetime) -> datetime:
    """An "as of" instant: bare dates mean the end of that day (UTC)."""
    return _parse(value, end_of_day=True)


def parse_published(value: str | date | datetime) -> datetime:
    """A publication instant: bare dates mean the start of that day (UTC)."""
    return _parse(value, end_of_day=False)


def iso(dt: datetime | None) -> str | None:
    """ISO-8601 with a Z suffix (naive datetimes are taken as UTC)."""
    if dt is None:
        return None
    return as_utc(dt).replace(tzinfo=None, microsecond=0).isoformat() + "Z"


def as_utc(dt: datetime) -> datetime:
    """An aware UTC datetime (naive ones are taken as UTC)."""
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def day(dt: datetime | None) -> str:
    return dt.date().isoformat() if dt else ""


def retry_after_seconds(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait: a number of seconds or an HTTP date
    (RFC 9110 §10.2.3); None when absent or unreadable, never negative."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    when = http_date(value)
    if when is None:
        return None
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def http_date(value: str | None) -> datetime | None:
    """An HTTP date (``Last-Modified``, ``Retry-After``: RFC 9110 §5.6.7) as a UTC-aware
    instant; None when absent or unreadable."""
    if not value:
        return None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)
