"""Cost as data: per-stage counters that become CostEvent rows for a run."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from sqlalchemy import func
from sqlmodel import Session, select

from core.store.models import CostCounts, CostEvent

# what a run spends (time and the pool's counts apart: METER_FIELDS adds them for the meters)
COST_FIELDS = ("llm_calls", "tokens_in", "tokens_out", "searches", "fetches", "usd")
# what re-checking sources took besides fetches: body bytes read, conditional re-checks
# answered 304 (no body) and sources served by another run's look (no request)
POOL_FIELDS = ("bytes", "not_modified", "shared_checks")
METER_FIELDS = (*COST_FIELDS, *POOL_FIELDS, "seconds")
LLM_FIELDS = ("llm_calls", "tokens_in", "tokens_out", "usd")  # zero for the offline writer
COST_LABELS = {
    "llm_calls": "LLM calls",
    "tokens_in": "tokens in",
    "tokens_out": "tokens out",
    "searches": "searches",
    "fetches": "fetches",
    "bytes": "bytes read",
    "not_modified": "unchanged (304)",
    "shared_checks": "served by the shared pool",
    "usd": "$",
    "seconds": "time (s)",
}
COST_KEYS = ("llm_calls", "tokens_in", "tokens_out", "searches", "fetches", "seconds")


class StageCost(CostCounts):
    """A CostEvent's counters plus writer calls (counted for the run summary, not stored)."""

    writer_calls: int = 0


COUNTERS = tuple(CostCounts.model_fields)


class CostMeter:
    """Thread-safe accumulator keyed by (stage, provider, model, prompt)."""

    def __init__(self) -> None:
        self._rows: dict[tuple[str, str, str, str], StageCost] = {}
        self._drained: dict[tuple[str, str, str, str], StageCost] = {}
        self._lock = threading.Lock()
        self._local = threading.local()  # each thread's stack of stages being timed

    def add(
        self, stage: str, provider: str = "", model: str = "", prompt: str = "", **counts: float
    ) -> None:
        with self._lock:
            row = self._rows.setdefault((stage, provider, model, prompt), StageCost())
            for key, value in counts.items():
                setattr(row, key, getattr(row, key) + value)

    @contextmanager
    def stage(self, stage: str, provider: str = "") -> Iterator[None]:
        """Time a stage. Stages nest — the engine's ``propose`` around a writer call's
        ``revise``, ``discover`` around its ``fetch`` — and each is charged only its own
        time, so the stages of a run add up to its wall time, never more."""
        stack = self._stack()
        start = time.perf_counter()
        stack.append(0.0)  # the time of the stages nested in this one, so far
        try:
            yield
        finally:
            elapsed = time.perf_counter() - start
            inner = stack.pop()
            if stack:
                stack[-1] += elapsed
            self.add(stage, provider, seconds=elapsed - inner)

    def _stack(self) -> list[float]:
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    def total(self, key: str) -> float:
        with self._lock:
            return sum(getattr(r, key) for r in self._rows.values())

    def totals(self) -> dict[str, float]:
        """The CLI contract's cost object."""
        out: dict[str, float] = {k: int(self.total(k)) for k in COST_KEYS if k != "seconds"}
        out["seconds"] = round(self.total("seconds"), 3)
        return out

    def events(self, run_id: int) -> list[CostEvent]:
        """CostEvent rows for what was spent since the last call (so a run can write its
        costs at every checkpoint, and a crash loses at most the work in flight)."""
        names = [*COUNTERS, "writer_calls"]
        events = []
        with self._lock:
            for key, row in sorted(self._rows.items()):
                done = self._drained.setdefault(key, StageCost())
                delta = {k: getattr(row, k) - getattr(done, k) for k in names}
                if not any(delta.values()):
                    continue
                for k in names:
                    setattr(done, k, getattr(row, k))
                delta.pop("writer_calls")
                stage, provider, model, prompt = key
                events.append(
                    CostEvent(
                        run_id=run_id,
                        stage=stage,
                        provider=provider,
                        model=model,
                        prompt=prompt,
                        **delta,
                    )
                )
        return events


# The meter and stage of the writer call in progress, so a writer that calls a model
# can record its tokens without the engine passing a meter through every method.
_ACTIVE: ContextVar[tuple[CostMeter, str] | None] = ContextVar("evergreen_meter", default=None)


@contextmanager
def metering(meter: CostMeter, stage: str) -> Iterator[None]:
    token = _ACTIVE.set((meter, stage))
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def record(provider: str, model: str = "", prompt: str = "", **counts: float) -> None:
    """Add counts (llm_calls, tokens_in, tokens_out, cached_tokens, usd, …) to the active
    writer call's stage, with the prompt template@version; a no-op outside a metered call."""
    active = _ACTIVE.get()
    if active is not None:
        meter, stage = active
        meter.add(stage, provider, model, prompt, **counts)


def active_stage() -> str | None:
    """The stage of the metered writer call in progress (None outside one)."""
    active = _ACTIVE.get()
    return active[1] if active is not None else None


def spent(key: str) -> float:
    """What the active run has spent so far on ``key`` (e.g. tokens_in, usd)."""
    active = _ACTIVE.get()
    return active[0].total(key) if active is not None else 0.0


def run_cost(session: Session, run_id: int) -> dict[str, float]:
    row = session.exec(
        select(
            func.coalesce(func.sum(CostEvent.llm_calls), 0),
            func.coalesce(func.sum(CostEvent.tokens_in), 0),
            func.coalesce(func.sum(CostEvent.tokens_out), 0),
            func.coalesce(func.sum(CostEvent.searches), 0),
            func.coalesce(func.sum(CostEvent.fetches), 0),
            func.coalesce(func.sum(CostEvent.bytes), 0),
            func.coalesce(func.sum(CostEvent.not_modified), 0),
            func.coalesce(func.sum(CostEvent.shared_checks), 0),
            func.coalesce(func.sum(CostEvent.seconds), 0.0),
            func.coalesce(func.sum(CostEvent.usd), 0.0),
        ).where(CostEvent.run_id == run_id)
    ).one()
    keys = (
        "llm_calls",
        "tokens_in",
        "tokens_out",
        "searches",
        "fetches",
        "bytes",
        "not_modified",
        "shared_checks",
        "seconds",
        "usd",
    )
    return {
        k: (round(float(v), 3) if k in ("seconds", "usd") else int(v))
        for k, v in zip(keys, row, strict=True)
    }
