"""Change classification on the whole PEP corpus (BENCHMARKS.md, "Change classification
on the whole PEP corpus").

Classifies every consecutive pair of versions of every page with
``core.domain.changes.classify_change`` and scores the result against the keyword-derived ground
truth of ``queries.json`` (all questions, all years):

- material changes caught: pairs the ground truth calls materially changed that come out
  ``material`` or ``changed``;
- of those above the similarity gate (>= 0.9), how many come out ``material``;
- changed-but-not-material pairs that come out ``minor``.

    python scripts/classify_peps.py [--corpus DIR] [--dump OUT.jsonl.gz]

``--dump`` writes every pair's kind, similarity and reasons, so two runs (before and after
a change to the classifier) can be compared pair by pair with ``--compare A B``.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

DEFAULT_DIR = Path(__file__).resolve().parents[2] / "shared/corpora/peps"
_CORE_KEYS = frozenset({"url", "title", "as_of", "content", "gone"})


def _year(as_of: str) -> int:
    return int(as_of[:4])


def run(corpus_dir: Path, dump: Path | None) -> dict[str, Any]:
    from core.domain.changes import classify_change

    versions: dict[int, list[dict[str, Any]]] = defaultdict(list)
    with gzip.open(corpus_dir / "peps_corpus.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            versions[int(rec["pep"])].append(rec)
    truth = json.loads((corpus_dir / "queries.json").read_text(encoding="utf-8"))
    material: set[tuple[int, int]] = set()
    changed: set[tuple[int, int]] = set()
    for query in truth["queries"]:
        for year, row in query["per_year"].items():
            changed.update((int(p), int(year)) for p in row.get("changed", []))
            material.update((int(p), int(year)) for p in row.get("material_changed", []))

    results: dict[tuple[int, int], tuple[str, float | None, list[str]]] = {}
    started = time.perf_counter()
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(gzip.open(dump, "wt", encoding="utf-8")) if dump else None
        for pep in sorted(versions):
            recs = sorted(versions[pep], key=lambda r: r["as_of"])
            for old, new in zip(recs, recs[1:], strict=False):
                # the record's metadata, as a corpus fetch hands it to the update
                result = classify_change(
                    old["content"],
                    new["content"],
                    old_meta={k: v for k, v in old.items() if k not in _CORE_KEYS},
                    new_meta={k: v for k, v in new.items() if k not in _CORE_KEYS},
                )
                key = (pep, _year(new["as_of"]))
                results[key] = (result.kind, result.similarity, result.reasons)
                if out is not None:
                    row = {
                        "pep": pep,
                        "year": key[1],
                        "kind": result.kind,
                        "similarity": result.similarity,
                        "reasons": result.reasons,
                        "claims": len(result.claims),
                    }
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
    elapsed = time.perf_counter() - started

    caught = [k for k in material if k in results and results[k][0] in ("material", "changed")]
    scored_material = [k for k in material if k in results]
    above = [k for k in scored_material if (results[k][1] or 0.0) >= 0.9]
    above_material = [k for k in above if results[k][0] == "material"]
    housekeeping = [k for k in changed - material if k in results]
    minor = [k for k in housekeeping if results[k][0] == "minor"]
    kinds: dict[str, int] = defaultdict(int)
    for kind, _, _ in results.values():
        kinds[kind] += 1
    return {
        "pairs": len(results),
        "kinds": dict(sorted(kinds.items())),
        "material_pairs": len(scored_material),
        "material_caught": round(len(caught) / max(1, len(scored_material)), 3),
        "material_caught_n": len(caught),
        "material_above_tau_called_material": f"{len(above_material)} / {len(above)}",
        "housekeeping_called_minor": round(len(minor) / max(1, len(housekeeping)), 3),
        "housekeeping_called_minor_n": f"{len(minor)} / {len(housekeeping)}",
        "seconds": round(elapsed, 1),
        "ms_per_pair": round(1000 * elapsed / max(1, len(results)), 1),
    }


def compare(a: Path, b: Path) -> None:
    def load(path: Path) -> dict[tuple[int, int], dict[str, Any]]:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            return {(r["pep"], r["year"]): r for r in map(json.loads, fh)}

    rows_a, rows_b = load(a), load(b)
    differ = [k for k in sorted(set(rows_a) | set(rows_b)) if rows_a.get(k) != rows_b.get(k)]
    for k in differ[:40]:
        ra, rb = rows_a.get(k) or {}, rows_b.get(k) or {}
        print(f"PEP {k[0]} {k[1]}: {ra.get('kind')} -> {rb.get('kind')}")
        gone = [r for r in ra.get("reasons", []) if r not in rb.get("reasons", [])]
        came = [r for r in rb.get("reasons", []) if r not in ra.get("reasons", [])]
        for r in gone:
            print(f"   - {r}")
        for r in came:
            print(f"   + {r}")
        if ra.get("claims") != rb.get("claims"):
            print(f"   claims {ra.get('claims')} -> {rb.get('claims')}")
    print(f"{len(rows_a)} / {len(rows_b)} pairs; {len(differ)} differ")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_DIR)
    ap.add_argument("--dump", type=Path, default=None)
    ap.add_argument("--compare", nargs=2, type=Path, default=None)
    args = ap.parse_args()
    if args.compare:
        compare(*args.compare)
        return 0
    print(json.dumps(run(args.corpus, args.dump), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
