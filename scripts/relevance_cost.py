"""What semantic relevance adds to an update: load the model once and score N pages.

Run it twice, with and without ``--score``; the difference is the cost (the pages are
read from a corpus in both runs). From the project root, in a workspace with the corpus:

    EVERGREEN_HOME=WS python scripts/relevance_cost.py --corpus peps --pages 40 --score

With ``--centre`` it times the corpus's centre instead (``core.domain.relevance.Centre``): making
its sample (the stored one is deleted first) and reading it back in a fresh process cache.

With ``--rank`` it times ranking the pages as an update does (``Relevance.hybrid_scores``,
the model loaded and the pages embedded) with relevance feedback and without.

With ``--place`` it times placing the last third of the pages among six sections made of
the others (``core.domain.placement.place``: words and meaning, the others as the pages
the report cites), the model already loaded, against words alone.

With ``--hits`` it times an update's window search as discovery makes it
(``core.engine.discovery.new_hits``, PEP packaging's question over 2025): the search
alone, and the search with its hits ranked again by meaning (title and snippet, the
model loaded, each search's hits embedded afresh).

With ``--excerpt`` it times cutting each page to what an LLM revision is shown of a new
source (``core.domain.excerpts.excerpt``: its opening and the paragraphs closest to the
section), the model already loaded.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.dates import parse_as_of  # noqa: E402
from core.errors import EvergreenError  # noqa: E402
from core.sources.corpus import Corpus  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--question", default="How is static typing in Python evolving?")
    parser.add_argument("--score", action="store_true")
    parser.add_argument("--centre", action="store_true")
    parser.add_argument("--place", action="store_true")
    parser.add_argument("--rank", action="store_true")
    parser.add_argument("--excerpt", action="store_true")
    parser.add_argument("--hits", action="store_true")
    parser.add_argument("--wide", type=int, help="with --hits: read this many times the hits kept")
    args = parser.parse_args()
    corpus = Corpus.open(args.corpus)
    if args.centre:
        return centre_cost(corpus)
    if args.hits:
        return hits_cost(corpus, args.wide)
    when = parse_as_of("2025-12-31")
    hits = corpus.search(args.question, max_results=args.pages, end_date=when)
    pages = {h.url: corpus.fetch(h.url, when) for h in hits}
    if args.place:
        return place_cost(args.question, pages)
    if args.rank:
        return rank_cost(args.question, corpus, pages)
    if args.excerpt:
        return excerpt_cost(args.question, pages)
    if args.score:
        from core.domain.relevance import Relevance

        scores = Relevance(args.question).page_scores(
            {u: (p.title, p.content) for u, p in pages.items()}
        )
        print(f"scored {len(scores)} pages; best {max(scores.values()):.3f}")
    else:
        print(f"read {len(pages)} pages")
    return 0


def place_cost(question: str, pages: dict) -> int:
    import time

    from core.domain.placement import place
    from core.domain.relevance import Relevance

    docs = [(u, p.title or "", (p.content or "")[:4000]) for u, p in pages.items()]
    cut = len(docs) * 2 // 3
    known, new = docs[:cut], docs[cut:]
    sections = [
        (str(i), known[i][1], " ".join(c[:3000] for _u, _t, c in known[i::6])) for i in range(6)
    ]
    cited = [(t, c) for _u, t, c in known]
    relevance = Relevance(question)
    place(new, sections, known=cited, relevance=relevance)  # the model loads once
    for label, rel in (("words and meaning", relevance), ("words alone", None)):
        wall = time.perf_counter()
        for _ in range(5):
            place(new, sections, known=cited, relevance=rel)
        each = (time.perf_counter() - wall) / 5
        print(f"placing {len(new)} new pages ({len(cited)} cited), {label}: {each:.3f} s")
    return 0


def rank_cost(question: str, corpus: Corpus, pages: dict) -> int:
    import time

    from core.domain.relevance import Relevance

    keyed = {u: (p.title or "", p.content or "") for u, p in pages.items()}
    relevance = Relevance(question, corpus)
    semantic = relevance.page_scores(keyed)  # the model loads and the pages are embedded once
    for label, feedback in (("with feedback", True), ("without", False)):
        wall = time.perf_counter()
        for _ in range(5):
            relevance.hybrid_scores(keyed, semantic, with_feedback=feedback)
        each = (time.perf_counter() - wall) / 5
        print(f"ranking {len(keyed)} pages by words and meaning, {label}: {each:.3f} s")
    return 0


def hits_cost(corpus: Corpus, wide: int | None) -> int:
    import time

    import core.engine.discovery as discovery
    from core.domain.relevance import Relevance
    from core.domain.report_settings import ReportSettings
    from core.engine.discovery import PROBE_SHARE, new_hits

    discovery.WIDE = wide or discovery.WIDE

    question = (
        "What are the current Python packaging standards (metadata, build backends, wheels,"
        " lock files, package indexes) and how have they changed?"
    )
    window = (parse_as_of("2024-12-31"), parse_as_of("2025-12-31"))
    keep = ReportSettings().discover_results * PROBE_SHARE
    Relevance(question, corpus).scores(["warm up"])  # the model loads once per process
    for label, meaning in (("search alone", False), ("ranked again by meaning", True)):
        runs = []
        for _ in range(5):
            relevance = Relevance(question, corpus) if meaning else None  # nothing cached
            wall = time.perf_counter()
            new_hits(corpus, question, keep, window, set(), relevance)
            runs.append(time.perf_counter() - wall)
        read = keep * discovery.WIDE
        print(f"probe keeping {keep} of {read} hits, {label}: {min(runs):.3f} s")
    return 0


def excerpt_cost(question: str, pages: dict) -> int:
    import time

    from core.domain.excerpts import excerpt
    from core.domain.relevance import Relevance
    from core.writers.prompt_material import REVISION_NEW_CHARS, REVISION_OPENING

    topic = Relevance(f"Open questions. {question}")  # the model loads once
    size = sum(len(p.content or "") for p in pages.values())
    wall = time.perf_counter()
    for p in pages.values():
        excerpt(p.content or "", topic, REVISION_NEW_CHARS, REVISION_OPENING)
    each = time.perf_counter() - wall
    print(f"excerpts of {len(pages)} pages ({size:,} characters): {each:.3f} s")
    return 0


def centre_cost(corpus: Corpus) -> int:
    import time

    import core.domain.relevance as relevance

    relevance._model()  # the model's load is not the centre's cost
    key = f"relevance-sample:{relevance.MODEL_ID}:{relevance.CENTRE_SAMPLE}"
    corpus.remember(key, "")  # no stored sample: it is made again
    for what in ("made", "read back"):
        relevance._CENTRES.clear()
        cpu, wall = time.process_time(), time.perf_counter()
        relevance.collection_centre(corpus)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        print(f"sample {what}: {cpu:.3f} s CPU, {wall:.3f} s wall")
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except EvergreenError as exc:  # an unknown corpus, a damaged one: say so, no traceback
        raise SystemExit(f"error: {exc}") from None
