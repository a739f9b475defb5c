"""How well relevance alone ranks a whole corpus for each tracked question: every page as
it stood at ``--as-of``, ranked by the raw cosine and by the cosine centred on the
corpus (``core.domain.relevance.Centre``), each alone and fused with the lexical TF-IDF score
(``Relevance.hybrid_scores``), and that ranked again by relevance feedback (what an update
ranks by, ``core.domain.feedback``). Prints, per scorer, the share of
the top N that is on topic and the share of the key sources it holds; with
``--per-question``, also each question's count of key sources in the top N by what an
update ranks by (the most a report citing N sources can hold with this ranking). Last,
the most any ranking could hold: a report citing N sources that were all key sources
holds min(N, key) of them, whatever it ranks by.

From the project root, in a workspace holding the corpus:

    EVERGREEN_HOME=WS python scripts/relevance_ranking.py --corpus peps \\
        --queries ../shared/corpora/peps/queries.json
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.bench.truth import load_queries  # noqa: E402
from core.dates import parse_as_of  # noqa: E402
from core.domain.relevance import Relevance  # noqa: E402
from core.errors import EvergreenError  # noqa: E402
from core.sources.base import PageNotFound  # noqa: E402
from core.sources.corpus import Corpus  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--queries", required=True)
    parser.add_argument("--as-of", default="2025-12-31")
    parser.add_argument("--top", type=int, nargs="+", default=[12, 25])
    parser.add_argument("--key-share", type=float, default=0.9)
    parser.add_argument("--per-question", action="store_true")
    args = parser.parse_args()
    corpus = Corpus.open(args.corpus)
    specs = load_queries(args.queries, corpus)
    when = parse_as_of(args.as_of)
    pages: dict[str, tuple[str, str]] = {}
    for (url,) in corpus._conn.execute("SELECT DISTINCT url FROM versions"):
        try:
            page = corpus.fetch(url, when)
        except PageNotFound:
            continue
        pages[url] = (page.title or "", page.content or "")
    table: dict[str, list[tuple[float, float]]] = {}
    held: list[str] = []
    ceiling: dict[int, list[float]] = {n: [] for n in args.top}
    for spec in specs:
        key = spec.key_sources(args.key_share) & set(pages)
        for n in args.top:
            ceiling[n].append(min(n, len(key)) / len(key) if key else 0.0)
        for centred in (False, True):
            rel = Relevance(spec.query, corpus if centred else None)
            semantic = rel.page_scores(pages)
            name = "centred" if centred else "raw"
            for scorer, scores in (
                (name, semantic),
                (f"{name}+lexical", rel.hybrid_scores(pages, semantic, with_feedback=False)),
                (f"{name}+lexical+feedback", rel.hybrid_scores(pages, semantic)),
            ):
                order = sorted(pages, key=lambda u: -scores[u])
                for n in args.top:
                    top = set(order[:n])
                    row = (len(top & spec.relevant) / n, len(top & key) / len(key) if key else 0.0)
                    table.setdefault(f"{scorer}@{n}", []).append(row)
                    if scorer == "centred+lexical+feedback":
                        held.append(
                            f"  {spec.id:24} top {n}: {len(top & key)} of {len(key)} key sources,"
                            f" {len(top & spec.relevant)} on topic"
                        )
    print(f"{args.corpus}, {len(specs)} questions, {len(pages)} pages as of {args.as_of}")
    print("scorer@N: on-topic share of the top N, key sources in it (mean over questions)")
    for name, rows in table.items():
        on_topic = statistics.mean(r[0] for r in rows)
        keys = statistics.mean(r[1] for r in rows)
        print(f"  {name:26} {on_topic:.3f}  {keys:.3f}")
    if args.per_question:
        print("per question, ranked as an update ranks (centred+lexical+feedback):")
        print("\n".join(held))
    print("the most any ranking can hold (every cited source a key one; mean over questions):")
    for n, shares in ceiling.items():
        print(f"  {n} sources: {statistics.mean(shares):.3f}")
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except EvergreenError as exc:  # an unknown corpus, a damaged one: say so, no traceback
        raise SystemExit(f"error: {exc}") from None
