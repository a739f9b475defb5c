"""A first report whose planned searches find only pages about the question reads
further down their results: the queries of one question often return the same few pages
(``core.engine.research._further_hits``)."""

from __future__ import annotations

from pathlib import Path

from core.dates import parse_as_of
from core.engine.creation import create_report
from core.sources.corpus import add_corpus
from tests.conftest import cited_urls, write_jsonl

SITES = ["Orkney", "Pentland", "Fundy", "Strangford", "Ramsey", "Raz Blanchard", "Minas"]
QUESTION = "How are tidal turbine arrays developing?"


FACTS = [
    "was built by {site} Marine Energy on a seabed lease granted in {year}",
    "exports its power through a {n}0 kilometre cable to the {site} substation",
    "uses two-bladed rotors that turn to face the ebb and the flood tide",
    "was financed by a green bond that {site} County Council issued in {year}",
    "sits in {n}5 metres of water, clear of the shipping lane",
    "is maintained from a harbour base that employs {n}2 technicians",
    "feeds a hydrogen electrolyser that fuels the {site} ferry",
]


def _tidal(n: int, site: str) -> dict:
    fact = FACTS[n].format(site=site, n=n + 1, year=2015 + n)
    text = (
        f"The {site} tidal turbine array {fact}. "
        f"{site} plans {n + 2} more tidal turbines for the array by {2026 + n}."
    )
    return {
        "url": f"https://tides.example/{n}",
        "title": f"{site} tidal turbine array",
        "as_of": "2024-01-01",
        "content": text,
    }


def _off(n: int) -> dict:
    text = (
        "Slow cooking a stew takes about four hours on a low heat. Brown the onions first, "
        "then add the stock and the herbs and leave the pot covered."
    )
    return {
        "url": f"https://food.example/{n}",
        "title": f"Stew recipe {n}",
        "as_of": "2024-01-01",
        "content": text,
    }


def test_searches_that_found_only_pages_on_topic_are_read_further(
    workspace: Path, tmp_path: Path
) -> None:
    records = [_tidal(n, site) for n, site in enumerate(SITES)] + [_off(n) for n in range(4)]
    add_corpus("tides", write_jsonl(tmp_path / "tides.jsonl", records))
    made = create_report(
        QUESTION,
        as_of=parse_as_of("2024-06-01"),
        source="corpus:tides",
        # three hits a query and no search per section: the planned queries alone
        settings={"results_per_query": 3, "section_results": 0},
    )
    cited = cited_urls(made["report_id"])
    assert len(cited) > 3, cited  # the planned queries found the same three pages
    assert all(url.startswith("https://tides.example/") for url in cited), cited
