"""Trying a crawl again (tenacity) while the server answers 429 or 5xx, waiting as the
web fetcher's retry rule says, for at most its number of attempts."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from tenacity import AsyncRetrying, RetryCallState, stop_after_attempt

RETRY = (429, 500, 502, 503, 504)


async def arun_retrying(
    crawler: Any,
    url: str,
    run_config: Callable[[], Any],
    retry_wait: Callable[[str, Any, int], tuple[float | None, str]],
    attempts: int,
) -> tuple[Any, str]:
    """The crawler's result for ``url`` (each try with a fresh ``run_config()``), tried
    again (tenacity) while the server answers 429 or 5xx, waiting as ``retry_wait`` says
    — inside the host's slot: the host asked us to wait. Returns the last result and the
    note for an error message."""
    notes = [""]

    def wait_of(state: RetryCallState) -> float | None:
        outcome = state.outcome
        assert outcome is not None  # tenacity asks after an attempt
        wait, notes[0] = retry_wait(url, outcome.result(), state.attempt_number)
        return wait

    async def attempt() -> Any:
        result = await crawler.arun(url, config=run_config())
        if result.status_code is None and "has been closed" in str(result.error_message):
            result = await crawler.arun(url, config=run_config())  # a browser race
        return result

    retrying = AsyncRetrying(
        retry=lambda state: wait_of(state) is not None,
        wait=lambda state: wait_of(state) or 0.0,
        stop=stop_after_attempt(attempts),
        retry_error_callback=lambda state: state.outcome.result() if state.outcome else None,
        sleep=asyncio.sleep,
    )
    result = await retrying(attempt)
    return result, notes[0]
