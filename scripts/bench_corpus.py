"""Corpus speed: import the whole PEP corpus, then time as-of searches and fetches.

Usage: python scripts/bench_corpus.py [--corpus PATH]   (prints medians in ms)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

DEFAULT = Path(__file__).resolve().parents[2] / "shared/corpora/peps/peps_corpus.jsonl.gz"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=str(DEFAULT))
    args = ap.parse_args()
    os.environ["EVERGREEN_HOME"] = tempfile.mkdtemp(prefix="eg-bench-")
    from core.dates import parse_as_of
    from core.sources.corpus import Corpus, add_corpus

    t = time.perf_counter()
    result = add_corpus("peps", args.corpus)
    import_s = time.perf_counter() - t
    corpus = Corpus.open("peps")
    queries_file = Path(args.corpus).with_name("queries.json")
    queries = json.loads(queries_file.read_text(encoding="utf-8"))["queries"]
    questions = [q["query"] for q in queries] + [
        "postponed evaluation of annotations",
        "release schedule end of life",
        "lock file format",
        "variadic generics",
        "wheel binary package format",
    ]
    years = range(2016, 2026)
    search_ms, fetch_ms = [], []
    for _ in range(3):
        for q in questions:
            for y in years:
                t = time.perf_counter()
                corpus.search(q, max_results=10, end_date=parse_as_of(f"{y}-12-31"))
                search_ms.append((time.perf_counter() - t) * 1000)
    urls = [f"https://peps.python.org/pep-{n:04d}/" for n in (8, 484, 526, 563, 572, 585, 593)]
    for _ in range(50):
        for u in urls:
            for y in (2019, 2021, 2025):
                t = time.perf_counter()
                corpus.fetch(u, parse_as_of(f"{y}-12-31"))
                fetch_ms.append((time.perf_counter() - t) * 1000)
    print(
        json.dumps(
            {
                "versions_imported": result.inserted + result.updated + result.unchanged,
                "import_seconds": round(import_s, 2),
                "search_ms_median": round(statistics.median(search_ms), 2),
                "search_ms_p95": round(sorted(search_ms)[int(len(search_ms) * 0.95)], 2),
                "searches": len(search_ms),
                "fetch_ms_median": round(statistics.median(fetch_ms), 3),
                "fetches": len(fetch_ms),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
