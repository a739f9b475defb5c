"""Fetching pages: each URL once, concurrently (all at once or as each arrives), and a
look at each page as the shared pool of checks has it or as fetched now.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from datetime import datetime

from core import faults
from core.engine.checks import FetchOutcome, SharedChecks
from core.engine.costs import CostMeter
from core.errors import EvergreenError
from core.sources.base import Fetcher, NotModified, PageNotFound, Validators
from core.store.models import Source


def fetch_many(
    fetcher: Fetcher,
    urls: Sequence[str],
    as_of: datetime,
    meter: CostMeter,
    *,
    concurrency: int = 8,
    stage: str = "fetch",
    validators: Mapping[str, Validators] | None = None,
) -> dict[str, FetchOutcome]:
    """Fetch each URL once, at most ``concurrency`` at a time; never raises for a page.
    A URL with ``validators`` is asked conditionally: a 304 is ``not_modified`` (no page:
    the caller has its text)."""

    def one(url: str) -> tuple[str, FetchOutcome]:
        valid = (validators or {}).get(url)
        try:
            if valid:
                page = fetcher.fetch(url, as_of, validators=valid)
            else:
                page = fetcher.fetch(url, as_of)
            meter.add(stage, fetcher.name, fetches=1, bytes=len(page.content.encode("utf-8")))
            return url, FetchOutcome(page)
        except NotModified:
            meter.add(stage, fetcher.name, not_modified=1)
            return url, FetchOutcome(None, not_modified=True)
        except PageNotFound as exc:
            meter.add(stage, fetcher.name, fetches=1)
            return url, FetchOutcome(None, str(exc), gone=True)
        except EvergreenError as exc:
            meter.add(stage, fetcher.name, fetches=1)
            return url, FetchOutcome(None, str(exc))

    unique = list(dict.fromkeys(urls))
    with _pool(max(1, min(concurrency, len(unique) or 1))) as pool:
        return dict(pool.map(one, unique))


@contextmanager
def _pool(workers: int) -> Iterator[ThreadPoolExecutor]:
    """A thread pool that, when its caller stops early (Ctrl-C, a cancel), drops queued
    fetches and does not wait for the ones in flight."""
    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        yield pool
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def fetch_stream(
    fetcher: Fetcher,
    urls: Sequence[str],
    as_of: datetime,
    meter: CostMeter,
    *,
    concurrency: int = 8,
    stage: str = "fetch",
    validators: Mapping[str, Validators] | None = None,
) -> Iterator[tuple[str, FetchOutcome]]:
    """Like fetch_many, but yields each page as soon as it arrives, so the caller can
    store it at once (a crash then loses at most the fetches in flight)."""
    unique = list(dict.fromkeys(urls))
    if not unique:
        return

    def one(url: str) -> FetchOutcome:
        return fetch_many(
            fetcher, [url], as_of, meter, concurrency=1, stage=stage, validators=validators
        )[url]

    with _pool(max(1, min(concurrency, len(unique)))) as pool:
        futures = {pool.submit(one, url): url for url in unique}
        for future in as_completed(futures):
            faults.point("fetch")
            yield futures[future], future.result()


def looks(
    checks: SharedChecks,
    fetcher: Fetcher,
    sources: Mapping[str, Source | None],
    as_of: datetime,
    meter: CostMeter,
    *,
    concurrency: int,
    stage: str,
) -> Iterator[tuple[str, FetchOutcome]]:
    """Each page (url → outcome) as the shared pool has it — a look another run made that
    still serves, counted as a shared check — or as fetched now, conditionally when an
    earlier look left validators (a 304 brings back the text that look stored). A URL
    with no source yet is fetched."""
    known = {url: source for url, source in sources.items() if source is not None}
    reused = checks.fresh(known, as_of)
    for url, outcome in reused.items():
        meter.add(stage, "pool", shared_checks=1)
        yield url, outcome
    rest = {url: source for url, source in sources.items() if url not in reused}
    validators = checks.validators({u: s for u, s in rest.items() if s is not None})
    for url, outcome in fetch_stream(
        fetcher,
        list(rest),
        as_of,
        meter,
        concurrency=concurrency,
        stage=stage,
        validators=validators,
    ):
        source = rest[url]
        yield url, checks.settle(source, outcome) if source is not None else outcome
