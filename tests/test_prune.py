"""Updates that prune: sources over the budget or superseded go, repeated facts merge,
sections keep to their words — each cut proposed with a plain reason and reviewed."""

from __future__ import annotations

from pathlib import Path

from core.dates import parse_as_of
from core.domain.prune import drop_markers, fit_words, keep_fact_lines, merge_repeats, restates
from core.domain.source_plan import choose_sources, superseded_by
from core.engine.creation import create_report
from core.engine.overview import DERIVED_KEYS
from core.engine.review import commit_run, get_run, proposals_of
from core.engine.update import update_report
from core.sources.corpus import add_corpus
from core.store.db import session_scope
from tests.conftest import cited_urls, write_jsonl

BODY = (
    "Alpha — Status: Final; Type: Standard [1]. Alpha sets the format every tool reads [1]. "
    "Beta and Alpha agree on the layout [1, 2].\n\n- Gamma item [2]\n- Delta item [3]\n\n"
    "| Item | Status |\n| --- | --- |\n| A | Final [2] |\n\n```\nexample [2]\n```"
)


def test_dropping_a_source_removes_what_only_it_says_and_keeps_shared_sentences() -> None:
    out = drop_markers(BODY, [2])
    assert "Beta and Alpha agree on the layout [1]." in out
    assert "Gamma item" not in out and "- Delta item [3]" in out
    assert "| A | Final" not in out and "| Item |" not in out  # the table went whole
    assert "example [2]" in out  # code is never edited


def test_a_sentence_a_citation_covers_goes_with_it() -> None:
    """The offline writer pulls in the sentence a quote leans on and cites the pair once;
    cutting that source must not leave the first sentence standing uncited (it did: "The
    only point of discussion was on the name of the expression." outlived its source)."""
    body = (
        "Key paths are checked by the compiler [1]. "
        "The only point of discussion was on the name of the expression. "
        "`#key` was proposed: it is shorter but says less [4]. "
        "Dynamic member lookup came later [2]. A closing remark stays."
    )
    assert drop_markers(body, [4]) == (
        "Key paths are checked by the compiler [1]. Dynamic member lookup came later [2]. "
        "A closing remark stays."
    )
    out, cut = fit_words(body, {1: 0.9, 2: 0.8, 4: 0.1}, 20)
    assert cut == [4] and "only point of discussion" not in out
    # a fact stated again goes with its lead-in, its citation joining the first statement
    first = "`#key` was proposed: it is shorter but says less [9]."
    merged, n = merge_repeats({"a": first, "b": body})
    assert n == 1 and merged["a"] == "`#key` was proposed: it is shorter but says less [9, 4]."
    assert "only point of discussion" not in merged["b"] and "[1]" in merged["b"]


def test_a_superseded_source_keeps_only_its_status_line() -> None:
    out = keep_fact_lines(BODY, [1])
    assert out.startswith("Alpha — Status: Final; Type: Standard [1].")
    assert "every tool reads" not in out and "Beta and Alpha agree" in out


def test_a_superseded_source_without_a_status_line_is_given_one() -> None:
    """A writer's "Status: Final [3]." or a sentence of prose is not a status line:
    trimmed away, it took the page out of the report without a word on what became of
    it (the LLM writer's packaging report lost three superseded metadata PEPs so)."""
    body = (
        "Status: Final [3]. Widget layout-1 puts metadata in one folder [3].\n\n"
        "Beta keeps its own layout [2]."
    )
    line = "Widget layout-1 — Status: Superseded; Superseded-By: Widget layout-2."
    out = keep_fact_lines(body, [3], {3: line})
    assert out == (
        "Widget layout-1 — Status: Superseded; Superseded-By: Widget layout-2 [3].\n\n"
        "Beta keeps its own layout [2]."
    )
    assert keep_fact_lines(BODY, [1], {1: "Alpha — Status: Superseded."}) == keep_fact_lines(
        BODY, [1]
    )  # a status line already there stays, for the reviser to bring up to date


def test_a_sentence_citing_two_superseded_sources_gives_each_its_status_line() -> None:
    """ "A string containing the package's version number [24, 42]." cited the metadata
    1.0 and 1.1 PEPs, both superseded in one window: trimmed whole, it took both pages
    out of the report while the review note said each was trimmed to its status line."""
    body = "A string containing the version number [24, 42].\n\nBeta keeps its layout [2]."
    lines = {24: "Metadata 1.1 — Status: Superseded.", 42: "Metadata 1.0 — Status: Superseded."}
    out = keep_fact_lines(body, [24, 42], lines)
    assert out == (
        "Metadata 1.1 — Status: Superseded [24]. Metadata 1.0 — Status: Superseded [42].\n\n"
        "Beta keeps its layout [2]."
    )


def test_a_section_over_its_words_loses_its_least_relevant_source_first() -> None:
    body = (
        "Strong source sentence one is about the question itself here [1]. "
        "Weak source sentence drifts off the question entirely today [2]. "
        "Weak source second sentence drifts even further away now [2]."
    )
    out, cut = fit_words(body, {1: 0.8, 2: 0.3}, 12)
    assert cut == [2] and "[2]" not in out and "Strong source" in out
    assert fit_words(body, {1: 0.8, 2: 0.3}, 0) == (body, [])  # no budget: no cut
    # the news (a source whose status just changed) is never the one cut
    out, cut = fit_words(body, {1: 0.8, 2: 0.3}, 12, protected=[2])
    assert cut == [1] and "[2]" in out


def test_a_section_over_its_words_shortens_every_source_before_one_goes() -> None:
    """Cutting whole sources first, a section over its words dropped pages the report's
    source budget had kept, while the sources before them kept three sentences each."""
    body = (
        "Alpha — Status: Final [1]. Alpha reads the whole format in one pass today [1]. "
        "Alpha also writes the index file beside every archive it makes [1].\n\n"
        "Beta — Status: Draft [2]. Beta signs each archive with a rotating key now [2]. "
        "Beta keeps the signatures in a separate folder of the archive [2]."
    )
    out, cut = fit_words(body, {1: 0.8, 2: 0.3}, 30)
    assert "[1]" in out and "[2]" in out  # both pages still named
    assert "Beta signs each archive" in out and "separate folder" not in out
    assert "index file" not in out and "Alpha reads" in out  # then the stronger one
    assert cut == [2, 1]
    # when even one sentence each is too much, the least relevant source goes whole
    out, cut = fit_words(body, {1: 0.8, 2: 0.3}, 14)
    assert "[2]" not in out and "Alpha reads" in out


def test_a_repeated_fact_is_stated_once_with_both_citations() -> None:
    merged, n = merge_repeats(
        {
            "a": "The format stores its metadata in the archive root directory [1].",
            "b": "The format stores its metadata in the archive's root directory [4]. "
            "Something else entirely is said here, at length [5].",
        }
    )
    assert n == 1
    assert merged["a"] == "The format stores its metadata in the archive root directory [1, 4]."
    assert merged["b"] == "Something else entirely is said here, at length [5]."


def test_a_repeated_status_line_stays_where_it_names_its_pages_paragraph() -> None:
    """A page's status line stated beside another page's sentence, and again at the head
    of the page's own paragraph: the first copy went, and the paragraph then opened "In
    April 2026 the developers signed …" with nothing naming whose developers."""
    line = "Tarnwick — Status: Financial investment decision reached [5]."
    body = (
        f"Flow batteries suit long durations [1]. {line}\n\n"
        f"{line} In April 2026 the developers signed a steam contract [5]."
    )
    merged, n = merge_repeats({"tech": body})
    assert n == 1
    assert merged["tech"] == (
        f"Flow batteries suit long durations [1].\n\n"
        f"{line} In April 2026 the developers signed a steam contract [5]."
    )
    # a line that opens no paragraph of its own page's sentences: the first copy stays
    plain = f"Flow batteries suit long durations [1]. {line}\n\n{line} Other news [2]."
    merged, n = merge_repeats({"tech": plain})
    assert (
        n == 1
        and merged["tech"] == f"Flow batteries suit long durations [1]. {line}\n\nOther news [2]."
    )
    # in another section the line is stated again: once per section
    merged, n = merge_repeats({"a": line, "b": line})
    assert n == 0


def test_alike_sentences_about_different_figures_are_two_facts() -> None:
    """Two release schedules say the same sentence of different versions: merging them
    would cite a page for a version it never names."""
    bodies = {
        "a": "Some time after the release of 3.9.0 final, the ninth and final 3.8 bugfix "
        "update will be released [25].",
        "b": "Some time after the release of 3.11.0 final, the ninth and final 3.10 bugfix "
        "update will be released [30].",
    }
    merged, n = merge_repeats(bodies)
    assert n == 0 and merged == bodies


def test_a_fact_restated_in_other_words_is_stated_once() -> None:
    """Two pages say the same approval in their own words: the later sentence goes, and
    its page is not cited for the first page's wording."""
    first = (
        "On 26 March the Halvard Grid Authority Board approved final capacity accreditation "
        "rules for storage [4]."
    )
    bodies = {
        "a": first,
        "b": "The HGA published draft rules on 4 December 2025 [10]. "
        "The HGA Board approved the final rules on 26 March 2026 [10].",
    }
    merged, n = merge_repeats(bodies)
    assert n == 1 and merged["a"] == first
    assert merged["b"] == "The HGA published draft rules on 4 December 2025 [10]."
    # not the same fact: another date, a denial, or more said than the first sentence
    assert not restates(
        "The HGA Board approved the final rules on 4 December 2025.", first.casefold()
    )
    assert not restates(
        "The HGA Board has not approved the final rules on 26 March.", first.casefold()
    )
    assert not restates(
        "The HGA Board approved the final rules on 26 March after a long consultation.",
        first.casefold(),
    )


def test_the_budget_keeps_the_most_relevant_and_favours_what_is_cited() -> None:
    kept, cuts = choose_sources({1: 0.50, 2: 0.52, 3: 0.40}, incumbents=[1, 3], budget=2, floor=0)
    assert kept == [1, 2] and set(cuts) == {3}  # 0.50 + bonus beats 0.52; 0.40 goes
    assert "budget" in cuts[3]
    # a source whose declared status just changed is the news: it stays, the budget takes
    # the next least relevant one instead
    kept, cuts = choose_sources(
        {1: 0.50, 2: 0.52, 3: 0.40}, incumbents=[1, 3], budget=2, floor=0, protected=[3]
    )
    assert set(kept) == {3, 1} and set(cuts) == {2}


def test_a_page_is_superseded_only_when_retired_and_naming_its_replacement() -> None:
    assert superseded_by("Status: Superseded\nSuperseded-By: 9\n\nText.") == "9"
    assert superseded_by("Status: Withdrawn\nType: X\n\nText.") is None
    assert superseded_by("Status: Final\nSuperseded-By: 9\n\nText.") is None


# -- through an update -------------------------------------------------------------------
QUESTION = "How is the Widget packaging format evolving: archive layout, signing?"


def _page(slug: str, as_of: str, status: str, text: str, extra: str = "") -> dict:
    header = f"Title: {slug}\nStatus: {status}\nType: Standards Track\n{extra}\n"
    return {
        "url": f"https://ex.org/{slug}",
        "title": f"Widget {slug}",
        "as_of": as_of,
        "content": f"{header}\n{text}",
    }


LAYOUT = (
    "The widget archive layout puts package metadata in a top level folder of the archive. "
    "Tools read the widget archive layout before they install the package contents. "
)
SIGNING = (
    "Widget archive signing attaches a detached signature file to each widget archive. "
    "Installers verify the widget archive signature against a published signing key. "
)
MASCOT = (
    "The widget project mascot is a cartoon owl that appears on packaging conference shirts. "
    "Volunteers drew the widget mascot owl for the packaging community's conference. "
)
LAYOUT2 = (
    "The second widget archive layout replaces the first and moves metadata to a manifest. "
    "Tools read the manifest of the widget archive layout before installing the package. "
)


def _records() -> list[dict]:
    return [
        _page("layout-1", "2024-01-01", "Draft", LAYOUT),
        _page("signing", "2024-01-01", "Draft", SIGNING),
        # later: the first layout is superseded by the second, which is accepted
        _page("layout-1", "2024-06-01", "Superseded", LAYOUT, "Superseded-By: Widget layout-2"),
        _page("layout-2", "2024-06-01", "Accepted", LAYOUT2),
    ]


def test_a_superseded_design_is_cut_to_its_status_line_and_its_successor_added(
    workspace: Path, tmp_path: Path
) -> None:
    add_corpus("wd", write_jsonl(tmp_path / "wd.jsonl", _records()))
    made = create_report(QUESTION, as_of=parse_as_of("2024-02-01"), source="corpus:wd")
    assert "https://ex.org/layout-1" in cited_urls(made["report_id"])
    result = update_report(made["report_id"], as_of=parse_as_of("2024-07-01"))
    with session_scope() as s:
        props = {p.key: p for p in proposals_of(s, result["run_id"])}
    changed = [
        p
        for p in props.values()
        if "[1]" in (p.old_text or "") and p.action != "keep" and p.key not in DERIVED_KEYS
    ]
    assert changed, {k: p.action for k, p in props.items()}
    text = changed[0].new_text or ""
    assert "Status: Superseded" in text and "top level folder" not in text
    assert "superseded by Widget layout-2" in changed[0].rationale
    with session_scope() as s:
        commit_run(s, get_run(s, result["run_id"]), approve_all=True)
    assert "https://ex.org/layout-2" in cited_urls(made["report_id"])


def test_a_budget_forces_the_least_relevant_source_out(workspace: Path, tmp_path: Path) -> None:
    records = [
        _page("layout-1", "2024-01-01", "Draft", LAYOUT),
        _page("signing", "2024-01-01", "Draft", SIGNING),
        _page("mascot", "2024-01-01", "Final", MASCOT),
        _page("layout-2", "2024-06-01", "Accepted", LAYOUT2),
    ]
    add_corpus("wb", write_jsonl(tmp_path / "wb.jsonl", records))
    made = create_report(
        QUESTION,
        as_of=parse_as_of("2024-02-01"),
        source="corpus:wb",
        settings={"max_sources": 3},
    )
    assert len(cited_urls(made["report_id"])) == 3
    result = update_report(made["report_id"], as_of=parse_as_of("2024-07-01"))
    with session_scope() as s:
        props = proposals_of(s, result["run_id"])
        removed = [p for p in props if "budget keeps" in p.rationale]
        assert removed, [(p.key, p.action, p.rationale) for p in props]
        assert all(p.decision == "pending" for p in removed)  # reviewed like any change
        assert all("Widget mascot" in p.rationale for p in removed)
        commit_run(s, get_run(s, result["run_id"]), approve_all=True)
    cited = cited_urls(made["report_id"])
    assert len(cited) == 3 and "https://ex.org/layout-2" in cited
    assert "https://ex.org/mascot" not in cited


def test_a_first_report_is_born_within_its_budget(workspace: Path, tmp_path: Path) -> None:
    records = [
        _page("layout-1", "2024-01-01", "Draft", LAYOUT),
        _page("signing", "2024-01-01", "Draft", SIGNING),
        _page("mascot", "2024-01-01", "Final", MASCOT),
    ]
    add_corpus("wf", write_jsonl(tmp_path / "wf.jsonl", records))
    made = create_report(
        QUESTION,
        as_of=parse_as_of("2024-02-01"),
        source="corpus:wf",
        settings={"max_sources": 2},
    )
    assert len(cited_urls(made["report_id"])) == 2
