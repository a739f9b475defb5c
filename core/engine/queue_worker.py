"""An ``evergreen worker`` process (PostgreSQL): the loop that takes the queue's jobs
(``core.engine.queue``) until stopped, and the watch that puts the jobs of dead workers back."""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from core.engine.queue import (
    ENV_HEARTBEAT,
    ENV_STALLED,
    QUEUE,
    _where,
    ensure_schema,
    heartbeat_seconds,
    make_app,
    requeue_stalled,
    require_postgres,
    stalled_seconds,
)
from core.engine.run_liveness import worker_id
from core.errors import EvergreenError
from core.settings import get_settings
from core.store.db import get_engine

log = logging.getLogger(__name__)


async def _watch_stalled(app: Any, every: float, stalled_after: float) -> None:
    while True:
        try:
            await requeue_stalled(app, stalled_after)
        except Exception:  # a database hiccup: look again next time
            log.exception("looking for stalled jobs failed")
        await asyncio.sleep(every)


def run_worker(*, concurrency: int = 1, until_empty: bool = False, url: str | None = None) -> None:
    """An ``evergreen worker``: take jobs until stopped (Ctrl-C or SIGTERM: no new job,
    the jobs in hand finish; a second signal stops at once, and another worker resumes
    those runs). ``until_empty``: stop once no job is left to take."""
    if not 1 <= concurrency <= 64:
        raise EvergreenError(f"--concurrency must be 1 to 64 (got {concurrency}).")
    url = require_postgres(url)
    heartbeat, stalled = heartbeat_seconds(), stalled_seconds()
    if heartbeat >= stalled:
        raise EvergreenError(
            f"{ENV_HEARTBEAT} ({heartbeat:g} s) must be shorter than {ENV_STALLED} "
            f"({stalled:g} s), or live workers would be taken for dead."
        )
    poll = get_settings().worker_poll
    get_engine(url)  # Evergreen's own tables, migrated, before any job
    ensure_schema(url)
    app = make_app(url, concurrency=concurrency)
    name = worker_id()
    log.info("worker %s on %s: %d at a time", name, _where(url), concurrency)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        # procrastinate runs each (synchronous) job in the loop's default executor
        loop.set_default_executor(ThreadPoolExecutor(concurrency + 4, "evergreen-job"))
        async with app.open_async():
            await requeue_stalled(app, stalled)  # what died while no worker looked
            watcher = asyncio.create_task(_watch_stalled(app, heartbeat, stalled))
            try:
                await app.run_worker_async(
                    queues=[QUEUE],
                    name=name,
                    concurrency=concurrency,
                    wait=not until_empty,
                    fetch_job_polling_interval=poll,
                    abort_job_polling_interval=poll,
                    update_heartbeat_interval=heartbeat,
                    stalled_worker_timeout=stalled,
                    delete_jobs="successful",
                )
            finally:
                watcher.cancel()

    asyncio.run(main())
