"""Relevance: lexical candidates re-ranked by a semantic model, and a floor below which a
page is not used — on a slice of the real PEP corpus where the question's words ("free",
"threads", "interpreter") are common in pages that are not about it."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.dates import parse_as_of
from core.domain import relevance
from core.domain.facets import topic_clause
from core.domain.first_choice import first_floor
from core.domain.relevance import RELEVANCE_MIN, Relevance, fuse
from core.engine.creation import create_report
from core.sources.corpus import add_corpus
from core.store.db import session_scope
from core.store.models import Source
from core.store.repository import citations_of, get_report, get_version
from tests.conftest import peps_slice

QUESTION = (
    "How is removing the GIL from CPython progressing: free-threading, the per-interpreter "
    "GIL and subinterpreters?"
)
ON_TOPIC = {311, 554, 684, 703, 734, 779, 803}
# share the question's words (free, thread, interpreter, lock, CPython) without being about it
OFF_TOPIC = {8, 20, 249, 257, 333, 418, 475, 517, 566, 572, 621, 622, 634, 643, 3108, 3156, 3333}


def test_a_question_whose_words_are_common_cites_the_pages_about_it(
    workspace: Path, tmp_path: Path
) -> None:
    add_corpus("gil", peps_slice(tmp_path, ON_TOPIC | OFF_TOPIC))
    # four pages a query: more candidates than the report uses, so it has to choose
    made = create_report(
        QUESTION,
        as_of=parse_as_of("2025-12-31"),
        source="corpus:gil",
        settings={"results_per_query": 4},
    )
    with session_scope() as s:
        version = get_version(s, get_report(s, made["report_id"]))
        urls = [s.get(Source, snap.source_id).url for snap in citations_of(s, version.id).values()]
    cited = {int(u.rstrip("/").rsplit("-", 1)[1]) for u in urls}
    assert {703, 684, 779} <= cited  # free-threading, the per-interpreter GIL, its status
    assert not cited & {249, 333, 3333, 3156}  # DB-API, WSGI, asyncio
    assert len(cited & ON_TOPIC) / len(cited) >= 0.8, cited


def test_the_semantic_score_separates_topic_from_shared_words() -> None:
    rel = Relevance(QUESTION)
    on, off = rel.scores(
        [
            "Making the Global Interpreter Lock Optional in CPython. This PEP proposes adding "
            "a build configuration to run Python code without the global interpreter lock.",
            "Python Web Server Gateway Interface. A proposed standard interface between web "
            "servers and Python web applications, free of charge, thread safe.",
        ]
    )
    assert on > off + 0.2


def test_a_clause_asking_what_to_report_does_not_outweigh_the_topic(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ "…: which features were proposed, accepted, or finalised, and what is still open?"
    are words of every standard's life cycle; embedded whole, the question preferred an
    issue tracker's page to a typing proposal. Blended with its topic clause, it does not."""
    question = (
        "How is static typing in Python evolving: which type-system features were proposed, "
        "accepted, or finalised, and what is still open?"
    )
    pages = [
        "Variadic Generics. This PEP introduces TypeVarTuple, a type variable that enables "
        "parameterising generic classes and functions with an arbitrary number of types.",
        "Improving bugs.python.org. This PEP proposes improvements to the issue tracker: "
        "issues are proposed, accepted, triaged or closed, and the open ones are listed weekly.",
    ]
    typing, tracker = Relevance(question).scores(pages)
    assert typing > tracker
    as_asked = Relevance(question, as_asked=True).scores(pages)  # "Heading: question"
    monkeypatch.setattr(relevance, "TOPIC_WEIGHT", 0.0)  # the question embedded whole
    typing, tracker = Relevance(question).scores(pages)
    assert typing < tracker and as_asked == pytest.approx([typing, tracker], abs=1e-6)
    assert topic_clause(question) == "How is static typing in Python evolving"
    assert topic_clause(QUESTION) is None  # a list of facets after the colon
    assert topic_clause("Note: how is typing evolving?") is None


def test_fusion_rewards_what_both_rankings_agree_on() -> None:
    lexical = ["wsgi", "gil", "subinterpreters", "dbapi"]
    semantic = {"gil": 0.7, "subinterpreters": 0.6, "wsgi": 0.2, "dbapi": 0.1}
    fused = fuse(lexical, semantic)
    assert fused[0] == "gil" and fused[-1] == "dbapi"  # second in both beats first in one
    assert fuse(lexical, {})[:2] == ["wsgi", "gil"]  # no scores: the search order


def test_floors_follow_the_question_never_below_the_minimum() -> None:
    assert first_floor([0.7, 0.5, 0.1]) == pytest.approx(0.42)
    assert first_floor([0.2, 0.1]) == RELEVANCE_MIN
    assert first_floor([]) == RELEVANCE_MIN


def test_loading_the_model_leaves_the_process_logging_alone() -> None:
    """The model's package configures the root logger when imported; a user's terminal
    would then show every library's INFO lines ("HTTP Request: POST …")."""
    import subprocess
    import sys

    probe = (
        "import logging; from core.domain.relevance import Relevance; Relevance('x'); "
        "root = logging.getLogger(); print(root.level, len(root.handlers))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.split() == ["30", "0"]  # WARNING, no handler: as Python starts
