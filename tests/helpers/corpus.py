"""The hand-made temporal corpus (grid battery pages that change on 2024-06-01) and a
report made from it, shared by the engine, crash, race and writer tests."""

from __future__ import annotations

from core.dates import parse_as_of
from core.engine.creation import create_report

LFP = (
    "Lithium iron phosphate batteries dominate new grid storage projects in the region. "
    "The average installed price of lithium iron phosphate storage was 142 dollars per kWh "
    "in the first quarter. Lithium iron phosphate cells last for thousands of cycles before "
    "they fade. Grid operators prefer lithium iron phosphate storage for four hour duties. "
)
FLOW = (
    "Vanadium flow batteries store energy in liquid electrolyte tanks for long durations. "
    "Flow battery projects remain small, with the largest vanadium flow battery at 40 MWh. "
    "Vanadium flow batteries do not degrade with cycling, which suits daily long duration use. "
)
POLICY = (
    "The storage tax credit pays thirty percent of eligible battery storage capital costs. "
    "The storage tax credit programme has an annual cap on credits for battery storage. "
    "Applications for the storage tax credit open every spring for battery storage owners. "
)
SODIUM = (
    "Sodium ion batteries are an emerging alternative chemistry for grid battery storage. "
    "Sodium ion cells avoid lithium and cobalt, which lowers battery storage supply risk. "
    "The first sodium ion battery storage pilot connected to the grid in the autumn. "
)
QUESTION = "What are the costs and technologies of grid battery storage, and which policies apply?"


def page(url: str, title: str, as_of: str, content: str, **extra: object) -> dict:
    return {
        "url": f"https://ex.org/{url}",
        "title": title,
        "as_of": as_of,
        "content": content,
        **extra,
    }


def corpus_records() -> list[dict]:
    return [
        page("lfp", "Lithium iron phosphate storage costs", "2024-01-01", LFP),
        page("flow", "Vanadium flow batteries", "2024-01-01", FLOW),
        page("credit", "Storage tax credit for battery storage", "2024-01-01", POLICY),
        # 2024-06-01: the LFP price changes (a small, material edit), flow unchanged,
        # the credit page gets a typo fix (minor), and a sodium-ion page appears.
        page(
            "lfp",
            "Lithium iron phosphate storage costs",
            "2024-06-01",
            LFP.replace("142 dollars", "128 dollars"),
        ),
        page(
            "credit",
            "Storage tax credit for battery storage",
            "2024-06-01",
            POLICY.replace("open every spring", "open every  spring"),
        ),
        page("sodium", "Sodium ion grid batteries", "2024-06-01", SODIUM),
    ]


def make_report(source: str) -> int:
    result = create_report(QUESTION, as_of=parse_as_of("2024-01-31"), source=source)
    assert result["version"] == 1 and result["sources"] >= 3
    assert result["cost"]["searches"] > 0 and result["cost"]["llm_calls"] == 0
    return result["report_id"]
