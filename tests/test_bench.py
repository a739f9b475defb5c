"""The temporal benchmark: ground truth, and a tiny end-to-end run (2 questions × 3 years)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import pytest
from sqlalchemy import update
from sqlmodel import select

from core.app.actions import review
from core.bench.fact_accuracy import fact_accuracy, fact_stated
from core.bench.freshness import unfresh_sources
from core.bench.measure import Pages, VersionView, quality, view
from core.bench.output import aggregate, step_table, summary_line, table_md, targets_line
from core.bench.relevance import (
    candidates,
    key_source_recall,
    key_source_recall_budget,
    relevance,
    topical_precision,
    words,
)
from core.bench.runner import BenchConfig
from core.bench.truth import QuerySpec, StatusChange, YearTruth, load_queries
from core.dates import parse_as_of
from core.domain.passages import sentence_key
from core.domain.report_state import RefEntry, ReportDoc, SectionDoc
from core.engine.creation import create_report
from core.engine.overview import DERIVED_KEYS
from core.engine.review import proposals_of
from core.engine.update import update_report
from core.errors import EvergreenError
from core.sources.corpus import Corpus, add_corpus
from core.store.db import session_scope
from core.store.models import Claim, ReportVersion, Section, Snapshot
from core.store.repository import claims_of_version
from tests.conftest import write_jsonl

TOPICS = {
    "storage": ["battery", "storage", "lithium", "grid", "capacity", "inverter", "duration"],
    "solar": ["solar", "panel", "photovoltaic", "rooftop", "module", "irradiance", "tariff"],
}


def _page(topic: str, i: int, year: int, revision: int) -> dict:
    words = TOPICS[topic]
    sentences = [
        f"The {words[i % 7]} {words[(i + 1) % 7]} programme number {i} reached "
        f"{100 + 10 * i + revision * 7} units in {year}.",
        f"Analysts say the {words[(i + 2) % 7]} market for {words[(i + 3) % 7]} systems "
        f"keeps growing across the region.",
        f"Regulators reviewed the {words[(i + 4) % 7]} rules for {words[(i + 5) % 7]} "
        f"projects during the year.",
        f"Operators expect {words[(i + 6) % 7]} {words[i % 7]} costs to keep falling "
        f"as {words[(i + 1) % 7]} supply expands.",
    ]
    return {
        "url": f"https://ex.org/{topic}/{i}",
        "title": f"{words[i % 7].capitalize()} {words[(i + 1) % 7]} report {i}",
        "as_of": f"{year}-06-30",
        "content": " ".join(sentences),
    }


def _fresh(topic: str, j: int, year: int) -> dict:
    """A new page squarely on the question, as fresh coverage usually is."""
    w = TOPICS[topic]
    return {
        "url": f"https://ex.org/{topic}/{j}",
        "title": f"{w[0].capitalize()} {w[1]} and {w[2]} outlook {year} edition {j}",
        "as_of": f"{year}-06-30",
        "content": (
            f"The {w[0]} {w[1]} sector saw {w[2]} prices move sharply in {year} edition {j}. "
            f"New {w[0]} and {w[2]} {w[1]} contracts doubled compared with the year before. "
            f"Developers of {w[1]} plan {j * 3} new {w[0]} sites using {w[2]} technology. "
        ),
    }


def three_year_corpus(tmp_path: Path) -> tuple[Path, Path]:
    records, per_year = [], {}
    for topic in TOPICS:
        for i in range(6):
            records.append(_page(topic, i, 2020, 0))
    truth = {
        t: {y: {"new": [], "changed": [], "material_changed": []} for y in (2021, 2022)}
        for t in TOPICS
    }
    for year, rev in ((2021, 1), (2022, 2)):
        for topic in TOPICS:
            for i in range(rev, 6, 2):  # some pages change a figure (material)
                records.append(_page(topic, i, year, rev))
                truth[topic][year]["changed"].append({"url": f"https://ex.org/{topic}/{i}"})
                truth[topic][year]["material_changed"].append(
                    {"url": f"https://ex.org/{topic}/{i}"}
                )
            for j in range(6 + 2 * (rev - 1), 8 + 2 * (rev - 1)):  # new pages appear
                records.append(_fresh(topic, j, year))
                truth[topic][year]["new"].append({"url": f"https://ex.org/{topic}/{j}"})
    queries = {
        "queries": [
            {
                "id": topic,
                "query": f"What is happening with {' and '.join(TOPICS[topic][:3])}?",
                "relevant": [
                    {"url": f"https://ex.org/{topic}/{i}", "score": 10.0 if i < 2 else 4.0}
                    for i in range(10)
                ],
                "per_year": {str(y): row for y, row in truth[topic].items()},
            }
            for topic in TOPICS
        ]
    }
    per_year = tmp_path / "queries.json"
    per_year.write_text(json.dumps(queries))
    return write_jsonl(tmp_path / "corpus.jsonl", records), per_year


def test_ground_truth_extraction(tmp_path: Path) -> None:
    _, qfile = three_year_corpus(tmp_path)
    specs = {s.id: s for s in load_queries(qfile)}
    storage = specs["storage"]
    assert storage.material_between(2020, 2021) == {
        "https://ex.org/storage/1",
        "https://ex.org/storage/3",
        "https://ex.org/storage/5",
    }
    assert storage.material_between(2020, 2022) == storage.material_between(2020, 2021) | {
        "https://ex.org/storage/2",
        "https://ex.org/storage/4",
    }
    assert storage.new_between(2021, 2022) == {
        "https://ex.org/storage/8",
        "https://ex.org/storage/9",
    }
    assert storage.material_between(2022, 2022) == set()


# --------------------------------------------------------------------------- ids, facts

STATUS_QUESTION = "Which grid storage tariff proposals were accepted or finalised?"


def _proposal(n: int, year: int, status: str) -> dict:
    """A PEP-like page: an RFC-822 header with a Status, then prose on grid storage tariffs."""
    content = (
        f"PEP: {n}\nTitle: Grid storage tariff proposal {n}\nStatus: {status}\n"
        "Type: Standards Track\nCreated: 01-Jan-2020\n\n"
        f"Abstract\n========\n\nThis proposal {n} sets a grid storage tariff for battery "
        f"storage operators. The grid storage tariff in proposal {n} is {10 + n} cents per "
        "kilowatt hour. Battery storage operators pay the tariff for each grid connection.\n"
    )
    return {
        "url": f"https://ex.org/proposals/{n}",
        "title": f"Grid storage tariff proposal {n}",
        "as_of": f"{year}-06-30",
        "content": content,
        "pep": n,
        "status": status,
    }


def status_corpus(tmp_path: Path) -> tuple[Path, Path]:
    """Two years; proposal 7 goes Draft -> Final in 2021, 8 stays Draft, 9 Accepted."""
    records = [_proposal(7, 2020, "Draft"), _proposal(8, 2020, "Draft")]
    records += [_proposal(9, 2020, "Accepted"), _proposal(7, 2021, "Final")]
    queries = {
        "queries": [
            {
                "id": "tariffs",
                "query": STATUS_QUESTION,
                "relevant": [{"pep": 7, "title": "x", "score": 9.5, "hits": 12}, 8, "9"],
                "per_year": {
                    "2021": {
                        "changed": [7],
                        "material_changed": ["7"],
                        "status_changes": ["7: Draft -> Final"],
                    }
                },
            }
        ]
    }
    qfile = tmp_path / "tariffs.json"
    qfile.write_text(json.dumps(queries))
    return write_jsonl(tmp_path / "tariffs.jsonl", records), qfile


def _open_status_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Corpus, Path]:
    monkeypatch.setenv("EVERGREEN_HOME", str(tmp_path / "ws"))
    corpus_file, qfile = status_corpus(tmp_path)
    add_corpus("tariffs", corpus_file)
    return Corpus.open("tariffs"), qfile


def test_bare_ids_resolve_through_corpus_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus, qfile = _open_status_corpus(tmp_path, monkeypatch)
    url = "https://ex.org/proposals/{}".format
    assert corpus.urls_for_ids([7, 8, 99]) == {7: [url(7)], 8: [url(8)], 99: []}
    assert corpus.urls_for_ids([7], "status") == {7: []}  # only under that key
    spec = load_queries(qfile, corpus)[0]
    assert spec.relevant == {url(7), url(8), url(9)}  # {"pep": 7}, 8 and "9"
    assert spec.material_between(2020, 2021) == {url(7)}
    assert spec.status_changes_between(2020, 2021) == {
        url(7): StatusChange(url(7), "Draft", "Final")
    }
    # an id no page carries is an error naming it (one line), as is an id without a corpus
    data = json.loads(qfile.read_text())
    data["queries"][0]["per_year"]["2021"]["new"] = [12345, "SE-0678"]
    qfile.write_text(json.dumps(data))
    with pytest.raises(EvergreenError, match="no page has id 12345, SE-0678") as err:
        load_queries(qfile, corpus)
    assert "\n" not in str(err.value)
    with pytest.raises(EvergreenError, match="give a corpus"):
        load_queries(qfile)
    corpus.close()
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    with pytest.raises(EvergreenError, match="not a queries file"):
        load_queries(bad)


def test_an_id_on_several_pages_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVERGREEN_HOME", str(tmp_path / "ws"))
    twin = {**_proposal(7, 2020, "Draft"), "url": "https://ex.org/elsewhere/7"}
    add_corpus("twins", write_jsonl(tmp_path / "t.jsonl", [_proposal(7, 2020, "Draft"), twin]))
    q = tmp_path / "q.json"
    q.write_text(json.dumps({"queries": [{"id": "x", "query": "q", "relevant": [7]}]}))
    corpus = Corpus.open("twins")
    with pytest.raises(EvergreenError, match="several pages have id 7"):
        load_queries(q, corpus)
    corpus.close()


def _version(body: str, url: str, as_of: str = "2021-12-31") -> VersionView:
    doc = ReportDoc("r", [SectionDoc("s", "Status", 1, body)], [RefEntry(1, url, "t")])
    version = ReportVersion(report_id=1, number=2, as_of=parse_as_of(as_of), title="r")
    return VersionView(1, 2, version, doc)


def test_fact_accuracy_new_status_scores_one_old_scores_zero(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus, qfile = _open_status_corpus(tmp_path, monkeypatch)
    spec = load_queries(qfile, corpus)[0]
    corpus.close()
    pages = Pages("tariffs")
    url = "https://ex.org/proposals/7"
    changes = spec.status_changes_between(2020, 2021)
    prev_as_of = parse_as_of("2020-12-31")

    def score(body: str, prev_urls: set[str] = {url}) -> float | None:  # noqa: B006
        return fact_accuracy(_version(body, url), prev_urls, changes, pages, prev_as_of)[0]

    head = "Grid storage tariff proposal 7 — Status: {}; Type: Standards Track [1]."
    rest = " The grid storage tariff in proposal 7 is 17 cents per kilowatt hour [1]."
    assert score(head.format("Final") + rest) == 1.0
    assert score(head.format("Draft") + rest) == 0.0  # keeps the old status
    assert score("Proposal 7 moved from **Draft** to *Final* [1].") == 1.0  # both, in one
    assert score(head.format("Final") + " It is still a draft [1].") == 0.0
    assert score(rest) == 0.0  # cites the source, never says the new status
    assert score(head.format("Final"), prev_urls=set()) is None  # not cited before
    pages.close()
    # a status with a qualifier: its status word alone counts, unless the old one had it
    assert fact_stated(["SE-0296 is implemented [1]."], ["Implemented (Swift 5.5)"], ["Accepted"])
    assert fact_stated(["Status: IMPLEMENTED (Swift 5.5) [1]."], ["Implemented (Swift 5.5)"], [])
    assert not fact_stated(["It was accepted [1]."], ["Implemented (Swift 5.5)"], ["Accepted"])
    old, new = ["Implemented (Swift 6.1)"], ["Implemented (Swift 6.2)"]
    assert not fact_stated(["It is implemented [1]."], new, old)
    assert not fact_stated(["Status: Implemented (Swift 6.1) [1]."], new, old)
    assert fact_stated(["SE-0371 is Implemented (Swift 6.2) [1]."], new, old)
    # a status word used as a verb or an adjective states nothing
    prose = "If the function only accepted three strings, our job would be done [1]."
    assert fact_stated(["Status: Final [1].", prose], ["Final"], ["Accepted"])
    assert not fact_stated(
        ["Adding a final qualifier — Status: Accepted [1]."], ["Final"], ["Accepted"]
    )
    assert fact_stated(["It went from Accepted → Final [1]."], ["Final"], ["Accepted"])
    assert not fact_stated(["We plan to draft a new version [1]."], ["Final"], ["Draft"])
    # a relative clause describes the noun before it, not the page
    code = "It turns rejected code into code that is accepted, because it is opened [1]."
    assert fact_stated(["Status: Implemented [1].", code], ["Implemented"], ["Accepted"])
    assert not fact_stated(["SE-0375 is accepted [1]."], ["Implemented"], ["Accepted"])
    # a condition says what would hold then, not what holds
    for said in (
        "If both this PEP and PEP 591 are accepted, type checkers are expected to cope [1].",
        "Once this PEP is accepted, the type will need to be backported [1].",
    ):
        assert fact_stated(["Status: Final [1].", said], ["Final"], ["Accepted"]), said
    assert not fact_stated(
        ["Status: Final [1].", "It is accepted, if late [1]."], ["Final"], ["Accepted"]
    )
    # a modal says what ought to or may happen, not what holds
    for said in (
        "The new union syntax should be accepted for function annotations [1].",
        "The proposal is expected to be accepted next year [1].",
    ):
        assert fact_stated(["Status: Final [1].", said], ["Final"], ["Accepted"]), said


def _measure(report_id: int, prev: int, t: int, spec: QuerySpec, pages: Pages) -> dict:
    with session_scope() as s:
        p, v = view(s, report_id, prev), view(s, report_id)
        out = quality(s, v, pages)
        out["fact_accuracy"], out["fact_changes"] = fact_accuracy(
            v, p.urls, spec.status_changes_between(t - 1, t), pages, p.version.as_of
        )
        return out


def test_fact_accuracy_and_stale_claims_of_real_versions(workspace: Path, tmp_path: Path) -> None:
    """The engine on a two-year corpus: an approved update states the new status (1.0);
    a rejected one keeps the old (0.0) and leaves a stale claim."""
    corpus_file, qfile = status_corpus(tmp_path)
    add_corpus("tariffs", corpus_file)
    corpus = Corpus.open("tariffs")
    spec = load_queries(qfile, corpus)[0]
    corpus.close()
    pages = Pages("tariffs")
    first = parse_as_of("2020-12-31")
    approved = create_report(STATUS_QUESTION, as_of=first, source="corpus:tariffs")["report_id"]
    rejected = create_report(STATUS_QUESTION, as_of=first, source="corpus:tariffs")["report_id"]
    with session_scope() as s:
        v1 = view(s, approved)
        assert "https://ex.org/proposals/7" in v1.urls
        assert quality(s, v1, pages)["support"] == 1.0
    update_report(approved, as_of=parse_as_of("2021-12-31"), approve_all=True)
    good = _measure(approved, 1, 2021, spec, pages)
    assert good["fact_changes"] == 1 and good["fact_accuracy"] == 1.0
    assert good["stale_claims"] == 0 and good["support"] == 1.0
    run = update_report(rejected, as_of=parse_as_of("2021-12-31"))
    with session_scope() as s:
        keys = [p.key for p in proposals_of(s, run["run_id"]) if p.action != "keep"]
    review(run["run_id"], reject=keys, approve_all=True, commit=True)
    bad = _measure(rejected, 1, 2021, spec, pages)
    assert bad["fact_accuracy"] == 0.0 and bad["stale_claims"] >= 1
    pages.close()


def _status_report(tmp_path: Path) -> int:
    """A first report on the two-year status corpus, as of its first year."""
    corpus_file, _ = status_corpus(tmp_path)
    add_corpus("tariffs", corpus_file)
    made = create_report(STATUS_QUESTION, as_of=parse_as_of("2020-12-31"), source="corpus:tariffs")
    return int(made["report_id"])


def test_support_needs_the_anchor_text_in_the_snapshot(workspace: Path, tmp_path: Path) -> None:
    """A claim marked supported whose quoted passage is not in its snapshot (or that has no
    passage at all) does not count: support is checked against the text."""
    rid = _status_report(tmp_path)
    with session_scope() as s:
        v = view(s, rid)
        before = quality(s, v)
        assert before["support"] == 1.0 and before["cited_sentences"] >= 3
        every = [c for _sec, c in claims_of_version(s, v.version.id)]
        per_sentence = Counter((c.section_id, c.position) for c in every)
        # two sentences that rest on one claim each (one citing two sources stays
        # supported by the other)
        claims = [
            c
            for c in every
            if c.state == "supported" and per_sentence[(c.section_id, c.position)] == 1
        ]
        # committed claims are immutable through the ORM: corrupt two behind its back, as
        # an engine bug would (the state still says "supported")
        wrong = [{**claims[0].selectors[0], "exact": "words no page contains"}]
        for claim, selectors in ((claims[0], wrong), (claims[1], [])):
            s.execute(update(Claim).where(Claim.id == claim.id).values(selectors=selectors))
        s.expire_all()
        after = quality(s, v)
    n = before["cited_sentences"]
    assert after["cited_sentences"] == n
    assert after["support"] == round((n - 2) / n, 4)
    assert after["claims"]["supported"] == before["claims"]["supported"]  # states unchanged


def test_a_sentence_no_citation_covers_is_counted(workspace: Path, tmp_path: Path) -> None:
    """A report of quoted sentences that says something with no source given for it: a
    cut that leaves a sentence standing uncited is counted, not averaged away."""
    rid = _status_report(tmp_path)
    with session_scope() as s:
        v = view(s, rid)
        assert quality(s, v)["uncited_sentences"] == 0
        section = next(
            x
            for x in s.exec(select(Section).where(Section.version_id == v.version.id))
            if x.level >= 1 and x.key not in DERIVED_KEYS
        )
        body = "A lead-in the next citation covers. " + section.body + "\n\nNo source says this."
        s.execute(update(Section).where(Section.id == section.id).values(body=body))
        s.expire_all()
        assert quality(s, view(s, rid))["uncited_sentences"] == 1


def test_freshness_does_not_count_an_extend_that_leaves_edited_claims() -> None:
    url, other = "https://ex.org/a", "https://ex.org/b"
    old = "Proposal A is a draft [1]. Its tariff is 17 cents [1]."
    extended = old + " Proposal B is new [2]."

    def proposal(outcome: str, text: str = old) -> SimpleNamespace:
        checks = [
            {"sentence": "Proposal A is a draft [1].", "marker": 1, "outcome": outcome},
            {"sentence": "Its tariff is 17 cents [1].", "marker": 1, "outcome": "intact"},
        ]
        return SimpleNamespace(key="s", old_text=text, claims=checks)

    markers = {1: url, 2: other}
    verified = {
        ("s", sentence_key("Proposal A is a draft [1]."), 1),
        ("s", sentence_key("Its tariff is 17 cents [1]."), 1),
    }

    def missed(outcome: str, final: str, anchored: set = verified) -> set[str]:  # noqa: B006
        return unfresh_sources([proposal(outcome)], markers, {url}, {"s": final}, anchored)

    assert missed("edited", extended) == {url}  # extend left the edited sentence as it was
    assert missed("gone", extended) == {url}
    assert missed("intact", extended) == set()  # re-anchored intact: fresh
    assert missed("intact", extended, set()) == {url}  # ...but only if its anchor holds
    revised = "Proposal A is final [1]. Its tariff is 17 cents [1]. Proposal B is new [2]."
    assert missed("edited", revised) == set()  # the sentence was revised
    assert missed("edited", "", verified) == set()  # the sentence is gone
    assert unfresh_sources([proposal("edited")], markers, {url}, {}, verified) == set()  # removed


# --------------------------------------------------------------------------- relevance

STORAGE_QUESTION = "What is happening with battery and storage and lithium?"
URL = "https://ex.org/{}".format
KITCHEN = URL("kitchen/1")  # relevant by decree, new in 2021, shares no word with the question


def discovery_corpus(tmp_path: Path) -> Path:
    """Storage pages 0–5 in 2020, page 1 revised in 2021; pages 6 and 7 (on the question)
    and an off-topic page appear in 2021."""
    records = [_page("storage", i, 2020, 0) for i in range(6)]
    records.append(_page("storage", 1, 2021, 1))
    records += [_fresh("storage", j, 2021) for j in (6, 7)]
    records.append(
        {
            "url": KITCHEN,
            "title": "Sourdough notes",
            "as_of": "2021-06-30",
            "content": "Sourdough bread rises slowly. Bakers knead dough overnight.",
        }
    )
    return write_jsonl(tmp_path / "discovery.jsonl", records)


def discovery_spec() -> QuerySpec:
    new = frozenset({URL("storage/6"), URL("storage/7"), KITCHEN})
    relevant = frozenset({URL(f"storage/{i}") for i in range(8)} | {KITCHEN})
    key = {URL("storage/0"): 10.0, URL("storage/6"): 9.5, KITCHEN: 9.0}
    return QuerySpec(
        id="storage",
        query=STORAGE_QUESTION,
        relevant=relevant,
        per_year={2021: YearTruth(new=new)},
        scores={**dict.fromkeys(relevant - set(key), 3.0), **key},
    )


def test_key_sources_are_scored_near_the_top(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = discovery_spec()
    assert spec.key_sources(0.9) == {URL("storage/0"), URL("storage/6"), KITCHEN}
    assert spec.key_sources(0.95) == {URL("storage/0"), URL("storage/6")}
    assert spec.key_sources(1.0) == {URL("storage/0")}
    assert QuerySpec("x", "q", frozenset({URL("a")})).key_sources(0.9) == set()  # no scores
    edge = QuerySpec("x", "q", frozenset(), scores={"a": 14.0, "b": 12.6, "c": 12.5})
    assert edge.key_sources(0.9) == {"a", "b"}  # 0.9 × 14 is 12.600000000000001 in floats
    # scores are read from the queries file, also for pages named by id
    corpus, qfile = _open_status_corpus(tmp_path, monkeypatch)
    loaded = load_queries(qfile, corpus)[0]
    corpus.close()
    assert loaded.scores == {URL("proposals/7"): 9.5}  # 8 and "9" carry no score
    with pytest.raises(EvergreenError, match="key-share"):
        BenchConfig("c", "q.json", [2020, 2021], ["lct"], key_share=1.5)


def test_topical_precision_and_words() -> None:
    relevant = {URL("a"), URL("b"), URL("x")}
    assert topical_precision({URL("a"), URL("b"), URL("c"), URL("d")}, relevant) == 0.5
    assert topical_precision({URL("a"), URL("c"), URL("d")}, relevant) == 0.3333
    assert topical_precision({URL("a")}, relevant) == 1.0
    assert topical_precision(set(), relevant) is None
    doc = ReportDoc(
        "r",
        [
            SectionDoc("p", "", 0, "Battery storage grew [1]."),
            SectionDoc("s", "Costs", 1, "Lithium prices fell [1][2]. Grid operators\nagreed [2]."),
        ],
    )
    assert words(doc) == 3 + 6  # markers and headings are not words of the report


def test_key_source_recall_counts_only_sources_that_exist_at_t(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVERGREEN_HOME", str(tmp_path / "ws"))
    add_corpus("tiny", discovery_corpus(tmp_path))
    pages = Pages("tiny")
    key = discovery_spec().key_sources(0.9)
    y2020, y2021 = parse_as_of("2020-12-31"), parse_as_of("2021-12-31")
    # at 2020 only storage/0 exists: citing it is full recall
    assert key_source_recall(key, {URL("storage/0"), URL("storage/3")}, y2020, pages) == (1.0, 1)
    assert key_source_recall(key, {URL("storage/3")}, y2020, pages) == (0.0, 1)
    # at 2021 all three exist; the off-topic one is not cited
    cited = {URL("storage/0"), URL("storage/6")}
    assert key_source_recall(key, cited, y2021, pages) == (0.6667, 3)
    assert key_source_recall(set(), cited, y2021, pages) == (None, 0)
    pages.close()


def test_discovery_recall_is_what_the_run_fetched_not_what_it_cites(
    workspace: Path, tmp_path: Path
) -> None:
    """An update's candidates are its new snapshots: the two on-topic pages new in 2021,
    not the revised page it re-fetched nor the off-topic one search cannot find (2 of 3).
    A regenerated report's candidates are everything its create fetched."""
    add_corpus("tiny", discovery_corpus(tmp_path))
    spec, pages = discovery_spec(), Pages("tiny")
    y2020, y2021 = parse_as_of("2020-12-31"), parse_as_of("2021-12-31")
    created = create_report(STORAGE_QUESTION, as_of=y2020, source="corpus:tiny")
    rid = created["report_id"]
    updated = update_report(rid, as_of=y2021, approve_all=True)
    rebuilt = create_report(STORAGE_QUESTION, as_of=y2021, source="corpus:tiny")
    with session_scope() as s:
        first = view(s, rid, 1)
        assert first.urls <= candidates(s, created["run_id"])
        assert URL("storage/1") in first.urls  # re-fetched by the update, as changed
        assert s.exec(
            select(Snapshot.change_kind).where(
                Snapshot.run_id == updated["run_id"], Snapshot.change_kind != "new"
            )
        ).all()
        assert candidates(s, updated["run_id"]) == {URL("storage/6"), URL("storage/7")}
        m = relevance(
            s,
            spec,
            view(s, rid),
            run_id=updated["run_id"],
            window=(2020, 2021),
            pages=pages,
            key_share=0.9,
        )
        regen = relevance(
            s,
            spec,
            view(s, rebuilt["report_id"]),
            run_id=rebuilt["run_id"],
            window=(2020, 2021),
            pages=pages,
            key_share=0.9,
        )
        opening = relevance(
            s, spec, first, run_id=created["run_id"], window=None, pages=pages, key_share=0.9
        )
    pages.close()
    assert (m["discovery_new"], m["discovery_found"], m["discovery_recall"]) == (3, 2, 0.6667)
    assert (regen["discovery_found"], regen["discovery_recall"]) == (2, 0.6667)
    assert opening["discovery_recall"] is None and opening["key_sources"] == 1
    assert m["key_sources"] == 3 and m["key_source_recall"] is not None
    assert m["key_source_recall"] <= 0.6667  # the off-topic key source is never in the pool
    assert m["topical_precision"] == 1.0 and m["cited"] > 0 and m["words"] > 0


def _rec(q: str, system: str, t: int, cited: int, tp: float, **extra: object) -> dict:
    return {
        "question": q,
        "system": system,
        "t": t,
        "cost": {},
        "continuity": None,
        "cited": cited,
        "words": 10 * cited,
        "topical_precision": tp,
        **extra,
    }


def test_aggregates_pool_discovery_and_take_the_final_step() -> None:
    records = [
        _rec("a", "lct", 2020, 10, 0.5, key_source_recall=0.5, key_source_recall_budget=0.5),
        _rec(
            "a",
            "lct",
            2021,
            15,
            0.6,
            key_source_recall=1.0,
            discovery_new=2,
            discovery_found=1,
            central_removed=2,
            central_removed_relevant=1,
        ),
        _rec(
            "a",
            "lct",
            2022,
            25,
            0.4,
            key_source_recall=0.75,
            key_source_recall_budget=0.9,
            discovery_new=2,
            discovery_found=2,
        ),
        _rec("b", "lct", 2020, 10, 1.0, key_source_recall=None),
        _rec(
            "b",
            "lct",
            2022,
            10,
            0.9,
            key_source_recall=1.0,
            key_source_recall_budget=1.0,
            discovery_new=4,
            discovery_found=1,
        ),
        _rec("a", "baseline", 2020, 12, 0.8),
        _rec("a", "baseline", 2022, 12, 0.7, discovery_new=2, discovery_found=2),
    ]
    agg = aggregate(records)
    lct = agg["lct"]
    assert lct["topical_precision"] == 0.68  # mean over every step
    assert lct["key_source_recall"] == 0.8125  # steps without key sources left out
    assert lct["discovery_recall"] == 0.5  # (1 + 2 + 1) / (2 + 2 + 4), pooled
    assert lct["sources_last_first"] == 1.75  # mean of 25 / 10 and 10 / 10
    assert (lct["central_removed"], lct["central_removed_relevant"]) == (2, 1)
    final = lct["final"]
    assert (final["topical_precision"], final["key_source_recall"]) == (0.65, 0.875)
    assert final["key_source_recall_budget"] == 0.95
    assert final["discovery_recall"] == 0.5 and final["cited"] == 17.5  # (2 + 1) / (2 + 4)
    assert agg["baseline"]["sources_last_first"] == 1.0
    assert agg["baseline"]["discovery_recall"] == 1.0
    assert targets_line(final) == (
        "Final LCT vs targets: 1 of 3 met — topical precision 0.650 (≥ 0.85) no, key-source "
        "recall at the budget 0.950 (≥ 0.85) yes, discovery recall 0.500 (≥ 0.95) no"
    )
    table = table_md(agg, [])
    assert "| Evergreen LCT | 0.650 | 0.875 | 0.950 | 0.500 | 1.750 | 17.500 | 175 |" in table
    assert "| target (final LCT) | ≥ 0.85 |  | ≥ 0.85 | ≥ 0.95 |  |  |  |" in table
    assert "Central sources removed by LCT updates" in table and ": 2, of them relevant: 1" in table
    steps = step_table(records)  # 2020: LCT 0.75 vs 0.8 (worse); 2022: 0.65 vs 0.7 (worse)
    assert "| 2020 | 0.750 | 0.800 |" in steps and "| 2021 | 0.600 | — |" in steps
    assert steps.rstrip().endswith("less on topic than regenerating: 2 of 3.")
    line = summary_line(agg)
    assert "LCT: topical precision 0.680, key-source recall 0.812" in line
    assert line.endswith(
        "final LCT: topical precision 0.650, key-source recall 0.875, key-source recall at "
        "the budget 0.950, discovery recall 0.500, sources last/first 1.750"
    )


def test_key_source_recall_counts_against_what_the_budget_can_hold() -> None:
    class Always:
        def exists(self, url: str, as_of: object) -> bool:
            return url != "gone"

    key = {f"k{i}" for i in range(40)} | {"gone"}
    cited = {f"k{i}" for i in range(20)} | {"other"}
    when = datetime(2025, 12, 31, tzinfo=UTC)
    assert key_source_recall_budget(key, cited, when, Always(), 25) == 0.8  # 20 of 25
    assert key_source_recall_budget(key, cited, when, Always(), 0) == 0.5  # no limit: 20 of 40
    assert key_source_recall_budget({"k1", "k2"}, {"k1"}, when, Always(), 25) == 0.5
    assert key_source_recall_budget({"gone"}, {"k1"}, when, Always(), 25) is None


#: the benchmark writes every question to its own SQLite database under ``--out``
#: (``core.bench.runner.run_question``), whatever the workspace's: a PostgreSQL twin of
#: these runs would run the same thing again
BENCH_OWN_DATABASES = pytest.mark.parametrize("workspace", ["sqlite"], indirect=True)


def _bench(workspace: Path, corpus: Path, qfile: Path, out: Path, *extra: str):
    env = {**os.environ, "EVERGREEN_HOME": str(workspace)}
    cmd = [sys.executable, "-m", "core.cli"]
    subprocess.run(
        [*cmd, "corpus", "add", "tiny", str(corpus)], env=env, check=True, capture_output=True
    )
    return subprocess.run(
        [
            *cmd,
            "bench",
            "--corpus",
            "tiny",
            "--queries",
            str(qfile),
            "--from",
            "2020",
            "--to",
            "2022",
            "--task",
            "both",
            "--interval",
            "2",
            "--out",
            str(out),
            *extra,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _without_timings(records: list[dict]) -> list[dict]:
    out = []
    for r in records:
        r = json.loads(json.dumps(r))
        r["cost"].pop("seconds", None)
        out.append(r)
    return out


@BENCH_OWN_DATABASES
def test_tiny_benchmark_end_to_end(workspace: Path, tmp_path: Path) -> None:
    corpus, qfile = three_year_corpus(tmp_path)
    out = tmp_path / "out"
    r = _bench(workspace, corpus, qfile, out)
    assert r.returncode == 0, r.stderr[-2000:]
    for name in ("results.json", "table.md", "charts.html", "summary.txt"):
        assert (out / name).stat().st_size > 0
    results = json.loads((out / "results.json").read_text())
    systems = {(rec["question"], rec["system"], rec["t"]) for rec in results["records"]}
    assert len(systems) == 2 * (3 + 3 + 2 + 1)  # baseline, lct, sst, sst@2 per question
    agg = results["aggregate"]
    assert agg["lct"]["content_rouge_l"] > agg["baseline"]["content_rouge_l"]
    assert agg["lct"]["searches"] < agg["baseline"]["searches"]
    assert agg["lct"]["stale_citations"] == 0 and agg["lct"]["citation_validity"] == 1.0
    assert agg["lct"]["stale_claims"] == 0 and agg["lct"]["support"] == 1.0
    for rec in results["records"]:
        assert {"support", "fact_accuracy", "stale_claims", "freshness", "claims"} <= set(rec)
        assert rec["uncited_sentences"] == 0  # the offline writer cites every sentence
    table = (out / "table.md").read_text()
    assert "Regenerate (OEDR)" in table
    head = "| system | topical_precision | key_source_recall | key_source_recall_budget | "
    assert head + "discovery_recall | sources_last_first | cited | words | support |" in table
    assert "Steps where LCT is less on topic than regenerating:" in table
    assert "new_evidence_recall" not in table and "target (final LCT)" in table
    for rec in results["records"]:
        assert 0 <= rec["topical_precision"] <= 1 and rec["words"] > 0
        assert rec["key_sources"] == 2 and 0 <= rec["key_source_recall"] <= 1  # pages 0, 1
        assert rec["key_source_recall_budget"] == rec["key_source_recall"]  # 2 within 25
        if rec["system"] == "lct" and rec["t"] > 2020:
            assert rec["central_removed"] >= rec["central_removed_relevant"] >= 0
        first = rec["t"] == 2020
        assert (rec["discovery_recall"] is None) == first  # no window for a first report
        gap = 2 if rec["system"] == "sst@2" else 1
        assert rec["discovery_new"] == (0 if first else 2 * gap)  # 2 relevant pages a year
    assert {"topical_precision", "discovery_recall", "cited"} <= set(agg["lct"]["final"])
    assert "topical precision" in (out / "summary.txt").read_text()
    # deterministic: a second run gives the same numbers (wall time aside)
    out2 = tmp_path / "out2"
    assert _bench(workspace, corpus, qfile, out2).returncode == 0
    again = json.loads((out2 / "results.json").read_text())
    assert _without_timings(again["records"]) == _without_timings(results["records"])
    # resume: an interrupted run (records cut short) continues to the same result
    rec_file = out2 / "records" / "solar.jsonl"
    lines = rec_file.read_text().splitlines()
    rec_file.write_text("\n".join(lines[:3]) + "\n")
    assert _bench(workspace, corpus, qfile, out2, "--resume").returncode == 0
    resumed = json.loads((out2 / "results.json").read_text())
    assert len(resumed["records"]) == len(results["records"])


@BENCH_OWN_DATABASES
def test_llm_benchmark_with_judge(workspace: Path, tmp_path: Path) -> None:
    """--writer llm --judge against a loopback OpenAI-compatible server."""
    from tests.fakes.openai_server import FakeOpenAI

    corpus, qfile = three_year_corpus(tmp_path)
    out = tmp_path / "llm"
    env = {**os.environ, "EVERGREEN_HOME": str(workspace)}
    cmd = [sys.executable, "-m", "core.cli"]
    subprocess.run(
        [*cmd, "corpus", "add", "tiny", str(corpus)], env=env, check=True, capture_output=True
    )
    refused = subprocess.run(
        [*cmd, "bench", "--corpus", "tiny", "--queries", str(qfile), "--out", str(out), "--judge"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 1 and "--judge needs --writer openai" in refused.stderr
    with FakeOpenAI() as llm:
        env.update(
            OPENAI_BASE_URL=llm.base_url, OPENAI_API_KEY="sk-test-bench", EVERGREEN_LLM="offline"
        )
        r = subprocess.run(
            [
                *cmd,
                "bench",
                "--corpus",
                "tiny",
                "--queries",
                str(qfile),
                "--from",
                "2020",
                "--to",
                "2021",
                "--task",
                "lct",
                "--writer",
                "llm",
                "--judge",
                "--out",
                str(out),
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert r.returncode == 0, r.stderr[-2000:]
        judged = [b for b in llm.requests if "report_a" in json.dumps(b)]
    results = json.loads((out / "results.json").read_text())
    lct = [rec for rec in results["records"] if rec["system"] == "lct" and rec["t"] == 2021]
    assert len(lct) == 2 and len(judged) == 2  # one judgement per question
    for rec in lct:
        race = rec["race"]
        assert set(race) >= {
            "comprehensiveness",
            "insight",
            "instruction_following",
            "readability",
            "overall",
        }
        assert 0 < race["overall"] < 1 and race["tokens_in"] > 0
    assert all(rec["cost"]["llm_calls"] > 0 for rec in results["records"])
    assert results["aggregate"]["lct"]["race_overall"] is not None
    assert "race_overall" in (out / "table.md").read_text()
    assert "sk-test-bench" not in (out / "results.json").read_text()
