"""An LLM writer against the fake OpenAI server, and evidence to write from, shared by
the writer tests."""

from __future__ import annotations

from pathlib import Path

from openai import OpenAI

from core.settings import Price
from core.writers.base import Evidence
from core.writers.llm import LlmWriter
from tests.fakes.openai_server import FakeOpenAI

KEY = "sk-test-abcdefghijklmnop"
PRICE = Price(input=0.15, output=0.60, cached_input=0.075)
EV = [
    Evidence(
        3,
        "https://ex.org/lfp",
        "Lithium iron phosphate storage costs",
        "The average installed price of lithium iron phosphate storage was 142 dollars per kWh "
        "in the first quarter. Grid operators prefer it for four hour duties.",
        0,
    ),
    Evidence(
        5,
        "https://ex.org/flow",
        "Vanadium flow batteries",
        "Vanadium flow batteries store energy in liquid electrolyte tanks for long durations.",
        1,
    ),
]


def make_writer(fake: FakeOpenAI, tmp_path: Path | None = None, **kw: object) -> LlmWriter:
    timeout = kw.pop("timeout", 10.0)
    client = OpenAI(api_key=KEY, base_url=fake.base_url, max_retries=0, timeout=timeout)
    options: dict[str, object] = {
        "planner": "gpt-4o-mini",
        "writer": "gpt-4o-mini",
        "summariser": "gpt-4o-mini",
        "price_for": lambda model: PRICE,
        "secrets": [KEY],
        "backoff": 0.01,
        "log_path": tmp_path / "llm_calls.jsonl" if tmp_path else None,
    }
    options.update(kw)
    return LlmWriter(client, **options)  # type: ignore[arg-type]
