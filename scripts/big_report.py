"""Write a Markdown report with many cited sentences, to time an import at scale.

    python scripts/big_report.py --claims 10000 --references 1000 -o big.md
    EVERGREEN_HOME=WS /usr/bin/time -f "%e s %M KB" \\
        python -m core.cli import-report big.md --query "Storage?" --as-of 2026-01-15

One section of ``--claims`` sentences, each citing one of ``--references`` pages.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def big_report(claims: int, references: int) -> str:
    lines = ["# Big report", "", "## Section", ""]
    lines += [
        f"Battery fact number {i} says capacity grew by {i % 97} percent in the year "
        f"[{i % references + 1}]."
        for i in range(claims)
    ]
    lines += ["", "## References", ""]
    lines += [
        f"[{r}] [Page {r}](https://pages.example/p{r}) — fetched 2026-01-15"
        for r in range(1, references + 1)
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--claims", type=int, default=10_000)
    parser.add_argument("--references", type=int, default=1_000)
    parser.add_argument("-o", "--out", type=Path, required=True)
    args = parser.parse_args()
    args.out.write_text(big_report(args.claims, args.references), encoding="utf-8")


if __name__ == "__main__":
    main()
