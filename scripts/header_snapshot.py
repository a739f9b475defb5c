"""Record what the header and front-matter readers return on every page of a corpus.

Run it before and after a change to those readers and compare the two files, so any
difference is seen page by page:

    python scripts/header_snapshot.py record OUT.jsonl.gz CORPUS.jsonl.gz [CORPUS ...]
    python scripts/header_snapshot.py compare BEFORE.jsonl.gz AFTER.jsonl.gz

One row per page version: the header blocks (layout, extent, every fact with its span),
the key facts with the record's metadata, ``header_fields``, the sentence units, the
title a report import would take from front matter, and the metadata a folder import
would take from it. ``compare`` prints the pages whose rows differ, by field, and a count.
Run from the project root (``PYTHONPATH`` may point at another checkout's ``core``).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def _pages(path: Path) -> Iterator[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def _first(*names: tuple[str, str]) -> Any:
    """The first of (module, attribute) that imports: the readers moved between modules."""
    import importlib

    for module, attr in names:
        try:
            return getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError):
            continue
    raise ImportError(f"none of {names}")


def _digest(value: Any) -> str:
    return hashlib.sha1(json.dumps(value, ensure_ascii=False).encode()).hexdigest()[:16]


def record(out: Path, corpora: list[Path]) -> None:
    from core.domain.header_blocks import header_blocks
    from core.domain.keyfacts import read_key_facts

    # the old homes first: another checkout's core may lack the new modules
    header_fields = _first(
        ("core.domain.changes", "header_fields"), ("core.domain.keyfacts", "header_fields")
    )
    split_sentences = _first(
        ("core.domain.changes", "split_sentences"), ("core.domain.page_units", "split_sentences")
    )
    split_front_matter = _first(
        ("core.sources.corpus", "split_front_matter"), ("core.domain.headers", "split_front_matter")
    )
    from core.domain.report_parse import parse_markdown

    n = 0
    with gzip.open(out, "wt", encoding="utf-8") as fh:
        for corpus in corpora:
            for page in _pages(corpus):
                content = page.get("content") or ""
                meta = {k: v for k, v in page.items() if k not in ("content", "url", "title")}
                blocks = [
                    {
                        "layout": b.layout,
                        "start": b.start,
                        "end": b.end,
                        "facts": [
                            [f.key, f.label, f.value, f.kind, f.start, len(f.raw)] for f in b.facts
                        ],
                    }
                    for b in header_blocks(content)
                ]
                units = split_sentences(content)
                try:
                    fm_meta, fm_body = split_front_matter(content)
                    folder = {
                        "meta": sorted(map(str, fm_meta)),
                        "body_at": len(content) - len(fm_body),
                    }
                except Exception as exc:  # a refusal is a result too
                    folder = {"error": type(exc).__name__}
                try:
                    title = parse_markdown(content, default_title="(default)").title
                except Exception as exc:
                    title = f"error: {type(exc).__name__}"
                row = {
                    "id": f"{corpus.name}:{page.get('url')}@{page.get('as_of')}",
                    "blocks": blocks,
                    "facts": [
                        [f.key, f.value, f.kind, f.start] for f in read_key_facts(content, meta)
                    ],
                    "fields": header_fields(content),
                    "units": [len(units), _digest(units)],
                    "units_head": units[:25],
                    "folder": folder,
                    "report_title": title,
                }
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
                n += 1
    print(f"{n} pages recorded in {out}")


def compare(before: Path, after: Path, show: int = 30) -> int:
    rows_a = {r["id"]: r for r in _pages(before)}
    rows_b = {r["id"]: r for r in _pages(after)}
    fields: Counter[str] = Counter()
    shown = 0
    differing = 0
    for key in sorted(set(rows_a) | set(rows_b)):
        a, b = rows_a.get(key), rows_b.get(key)
        if a == b:
            continue
        differing += 1
        names = sorted(
            k for k in set(a or {}) | set(b or {}) if (a or {}).get(k) != (b or {}).get(k)
        )
        fields.update(names)
        if shown < show:
            shown += 1
            print(f"== {key}: {', '.join(names)}")
            for name in names:
                if name in ("units_head",):
                    ua, ub = (a or {}).get(name, []), (b or {}).get(name, [])
                    for x, y in zip(ua, ub, strict=False):
                        if x != y:
                            print(f"   {name}: {x!r}\n        -> {y!r}")
                            break
                else:
                    print(f"   {name}: {json.dumps((a or {}).get(name), ensure_ascii=False)[:400]}")
                    print(f"        -> {json.dumps((b or {}).get(name), ensure_ascii=False)[:400]}")
    print(f"{len(rows_a)} / {len(rows_b)} pages; {differing} differ; by field: {dict(fields)}")
    return differing


def main(argv: list[str]) -> int:
    if len(argv) >= 3 and argv[0] == "record":
        record(Path(argv[1]), [Path(p) for p in argv[2:]])
        return 0
    if len(argv) == 3 and argv[0] == "compare":
        compare(Path(argv[1]), Path(argv[2]))
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
