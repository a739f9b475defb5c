"""Measure what one update of the sample report costs with the LLM writer.

    python -m tests.fakes.measure_sample_update

Loads the sample workspace (as `evergreen demo` does) into a temporary folder, then
updates the sample report to 2026-04-15 with EVERGREEN_LLM=openai against the fake
OpenAI-compatible server (tests/fakes/openai_server.py), whose usage accounting counts
about 4 characters per token. Prints the run's cost events and $ at the price table.
"""

from __future__ import annotations

import os
import tempfile

from tests.fakes.openai_server import FakeOpenAI


def main() -> None:
    home = tempfile.mkdtemp(prefix="evergreen-measure-")
    os.environ.update(
        {
            "EVERGREEN_HOME": home,
            "EVERGREEN_CONFIG": os.path.join(home, "none.toml"),
            "EVERGREEN_LLM": "openai",
            "OPENAI_API_KEY": "sk-measure",
        }
    )
    from sqlmodel import select

    from core.dates import parse_as_of
    from core.engine.update import update_report
    from core.settings import DEFAULT_PRICES
    from core.store.db import session_scope
    from core.store.models import CostEvent
    from core.workspace import load_sample

    with FakeOpenAI() as fake:
        os.environ["OPENAI_BASE_URL"] = fake.base_url
        with session_scope() as s:
            report_id = load_sample(s)["report_id"]
        result = update_report(report_id, as_of=parse_as_of("2026-04-15"))
        with session_scope() as s:
            events = s.exec(select(CostEvent).where(CostEvent.run_id == result["run_id"])).all()
        usage = fake.usage_totals()
    print("actions:", result["actions"], "evidence:", result["evidence"])
    print("cost:", result["cost"])
    for e in events:
        if e.llm_calls or e.searches or e.fetches:
            print(
                f"  {e.stage:9} {e.provider:8} {e.model:12} calls={e.llm_calls} "
                f"in={e.tokens_in} out={e.tokens_out} cached={e.cached_tokens} "
                f"searches={e.searches} fetches={e.fetches}"
            )
    print("server usage:", usage)
    for model, price in DEFAULT_PRICES.items():
        usd = (
            (usage["prompt"] - usage["cached"]) * price.input
            + usage["cached"] * price.cached_input
            + usage["completion"] * price.output
        ) / 1e6
        print(f"  at {model} prices: ${usd:.4f}")


if __name__ == "__main__":
    main()
