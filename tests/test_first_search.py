"""A first report whose planned searches find only pages about the question reads
further down their results: the queries of one question often return the same few pages
(``core.engine.research._further_hits``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.dates import parse_as_of
from core.engine.creation import create_report
from core.errors import EvergreenError
from core.sources.corpus import Corpus, add_corpus
from core.store.db import session_scope
from core.store.models import UpdateRun
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


def test_a_search_that_fails_when_read_further_leaves_the_report_as_found(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = [_tidal(n, site) for n, site in enumerate(SITES)] + [_off(n) for n in range(4)]
    add_corpus("tides", write_jsonl(tmp_path / "tides.jsonl", records))
    search = Corpus.search

    def failing(self: Corpus, query: str, *, max_results: int = 10, **kw: object) -> list:
        if max_results == 6:  # reading further: twice the three results a query
            raise EvergreenError("Search failed: the service is down.")
        return search(self, query, max_results=max_results, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(Corpus, "search", failing)
    made = create_report(
        QUESTION,
        as_of=parse_as_of("2024-06-01"),
        source="corpus:tides",
        settings={"results_per_query": 3, "section_results": 0},
    )
    assert made["version"] == 1
    assert 0 < len(cited_urls(made["report_id"])) <= 3
    with session_scope() as s:
        flags = s.get(UpdateRun, made["run_id"]).summary["flags"]
    assert any("could not be read further" in f for f in flags), flags
