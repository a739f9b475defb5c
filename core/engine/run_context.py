"""What every step of a run works with — the database session, the report and its run,
the cost meter, the providers of the report's source and its writer — and how a step
reports progress (a checkpoint: the work so far is committed, a cancel is noticed).
The update engine's state (``core.engine.stages.Update``) and a from-scratch run's
(``core.engine.research.Research``) both start from it."""

from __future__ import annotations

from dataclasses import dataclass

from sqlmodel import Session

from core.engine.costs import CostMeter
from core.engine.run_work import checkpoint
from core.sources.registry import Providers
from core.store.models import Report, UpdateRun
from core.writers.base import Writer


@dataclass
class RunContext:
    session: Session
    report: Report
    run: UpdateRun
    meter: CostMeter
    providers: Providers
    writer: Writer

    def progress(self, text: str) -> None:
        checkpoint(self.session, self.run, text, self.meter)
