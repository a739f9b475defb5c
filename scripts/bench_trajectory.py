"""Each question's path through a benchmark run, step by step: how many sources each
version cites, its topical precision and its key-source recall at the budget — for the
long chain (LCT) and for regenerating — read from the run's ``records/*.jsonl``. Where a
final figure hides how a report got there (a 2016 report on a topic that did not exist
yet, kept and filled to its budget), this shows it.

From the project root, after ``evergreen bench … --out DIR``:

    python scripts/bench_trajectory.py DIR [DIR …]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

SYSTEMS = ("lct", "baseline")  # the long chain, and regenerating from scratch


def _records(out: Path) -> dict[str, list[dict[str, Any]]]:
    by_question: dict[str, list[dict[str, Any]]] = {}
    for path in sorted((out / "records").glob("*.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines()
        by_question[path.stem] = [json.loads(line) for line in lines if line.strip()]
    return by_question


def _cell(record: dict[str, Any]) -> str:
    precision = record.get("topical_precision")
    key = record.get("key_source_recall_budget")
    shown = [f"{precision:.2f}" if precision is not None else "–"]
    shown.append(f"{key:.2f}" if key is not None else "–")
    return f"{record.get('cited', 0):>2}/" + "/".join(shown)


def trajectory(out: Path) -> list[str]:
    """One line per question and system: cited/precision/key at the budget, per year."""
    lines = [f"{out}  (cited/precision/key-source recall at the budget, per year)"]
    for question, records in _records(out).items():
        for system in SYSTEMS:
            steps = sorted((r for r in records if r["system"] == system), key=lambda r: r["t"])
            if steps:
                cells = " ".join(_cell(r) for r in steps)
                lines.append(f"  {question[:26]:26s} {system:8s} {cells}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="benchmark output folders")
    for out in parser.parse_args().runs:
        print("\n".join(trajectory(out)))


if __name__ == "__main__":
    main()
