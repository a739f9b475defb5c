"""The temporal benchmark: ground truth, and a tiny end-to-end run (2 questions × 3 years)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.bench.truth import PEP_URL, load_queries
from core.errors import EvergreenError
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
                "relevant": [{"url": f"https://ex.org/{topic}/{i}"} for i in range(10)],
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


def test_pep_numbers_map_to_urls(tmp_path: Path) -> None:
    q = tmp_path / "q.json"
    q.write_text(
        json.dumps(
            {
                "queries": [
                    {
                        "id": "x",
                        "query": "q",
                        "relevant": [{"pep": 563}],
                        "per_year": {"2025": {"material_changed": [563]}},
                    }
                ]
            }
        )
    )
    spec = load_queries(q)[0]
    assert spec.material_between(2024, 2025) == {PEP_URL.format(563)}
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    with pytest.raises(EvergreenError, match="not a queries file"):
        load_queries(bad)


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
    assert "Regenerate (OEDR)" in (out / "table.md").read_text()
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
    assert refused.returncode == 1 and "--judge needs --writer llm" in refused.stderr
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
