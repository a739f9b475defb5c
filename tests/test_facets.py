"""The facets a question names: the parts a report answers one by one, each searched on
its own; and the assignment of pages to them."""

from __future__ import annotations

from core.domain.facets import facets_of, heading_of, subject_of
from core.domain.first_choice import assign, facet_choice


def test_a_parenthesised_list_names_the_facets_and_the_rest_is_the_subject() -> None:
    facets = facets_of(
        "What are the current Python packaging standards (metadata, build backends, wheels, "
        "lock files, package indexes) and how have they changed?"
    )
    assert [f.name for f in facets] == [
        "Metadata",
        "Build backends",
        "Wheels",
        "Lock files",
        "Package indexes",
    ]
    assert facets[1].query == "build backends Python packaging standards"


def test_things_named_before_a_parenthesised_list_are_facets_too() -> None:
    facets = facets_of(
        "How are the Swift standard library's String, Character/Unicode and collection APIs "
        "(Sequence/Collection algorithms, Array/Dictionary/Set, slicing and indices) "
        "evolving, and which additions were accepted?"
    )
    assert [f.name for f in facets] == [
        "String",
        "Character/Unicode",
        "Sequence/Collection algorithms",
        "Array/Dictionary/Set",
        "Slicing and indices",
    ]
    # "X and Y (…)" names no list before the parentheses: they spell out the whole
    facets = facets_of(
        "How does the Python release cadence and version lifecycle work (schedules, "
        "end-of-life dates, support periods)?"
    )
    assert [f.name for f in facets] == ["Schedules", "End-of-life dates", "Support periods"]


def test_a_list_after_a_colon_keeps_items_joined_by_and_and_drops_parentheticals() -> None:
    facets = facets_of(
        "Which features have shipped: result builders, property wrappers, key paths and "
        "dynamic member lookup, and the macro system (expression, attached and body macros)?"
    )
    assert [f.name for f in facets] == [
        "Result builders",
        "Property wrappers",
        "Key paths and dynamic member lookup",
        "Macro system",
    ]
    assert "attached" in facets[3].query  # the parenthetical still helps the search


def test_a_question_that_names_no_list_has_no_facets() -> None:
    assert facets_of("How are grid-scale battery storage projects developing?") == []
    # clauses after a colon are not a list of named things
    assert (
        facets_of(
            "How is static typing evolving: which features were proposed, accepted, or "
            "finalised, and what is still open?"
        )
        == []
    )


def test_things_a_question_joins_with_and_before_of_are_facets() -> None:
    """No list, but the question names its parts in prose: "the costs and technologies of
    X" and "which policies apply" are three aspects of X, each a section."""
    facets = facets_of(
        "What are the costs and technologies of grid battery storage, and which policies apply?"
    )
    assert [f.name for f in facets] == ["Costs", "Technologies", "Policies"]
    assert [f.query for f in facets] == [
        "costs grid battery storage",
        "technologies grid battery storage",
        "policies grid battery storage",
    ]
    facets = facets_of("What are the costs, risks and benefits of offshore wind in the North Sea?")
    assert [(f.name, f.query) for f in facets][2] == (
        "Benefits",
        "benefits offshore wind North Sea",
    )
    facets = facets_of("Which countries regulate facial recognition, and what penalties apply?")
    assert [(f.name, f.query) for f in facets] == [
        ("Countries", "countries facial recognition"),
        ("Penalties", "penalties facial recognition"),
    ]


def test_one_thing_asked_about_or_a_vague_one_is_no_facet() -> None:
    for question in (
        "What happened to the price of lithium, and which producers cut output?",
        "What kinds of batteries exist and which ones are cheapest?",
        "What is the status of the EU AI Act and the US executive order?",
        "Which firms lead the market and what products do they sell?",
    ):
        assert facets_of(question) == [], question


def test_pages_go_to_the_facet_they_lean_to_not_away_from_a_crowded_one() -> None:
    """Every facet's query holds the question's subject, so a page about the subject
    scores high on all of them. Standardised over the pages alone, the chemistry page
    would go to "policies", whose scores run low for every page; relative to its own
    scores it is about technologies."""
    scores = {  # (costs, technologies, policies)
        "chemistry": [0.49, 0.59, 0.46],
        "cells": [0.48, 0.57, 0.32],
        "index": [0.25, 0.26, 0.28],
        "webinar": [0.31, 0.26, 0.27],
    }
    assert assign(list(scores), scores)["chemistry"] == 1


def test_headings_keep_identifiers_and_acronyms() -> None:
    assert heading_of("existential `any`") == "Existential `any`"
    assert heading_of("the per-interpreter GIL") == "Per-interpreter GIL"
    assert heading_of("iOS support") == "iOS support"
    assert subject_of("How is Swift concurrency evolving") == "Swift concurrency"


def test_pages_go_to_the_facet_they_stand_out_on_not_the_broadest_one() -> None:
    # facet 0 ("metadata") scores every page high; the wheel page stands out on facet 1
    scores = {
        "meta": [0.62, 0.28],
        "wheel": [0.45, 0.43],
        "other1": [0.50, 0.30],
        "other2": [0.55, 0.25],
    }
    assert assign(list(scores), scores)["wheel"] == 1
    assert assign(list(scores), scores)["meta"] == 0


def test_every_facet_gets_its_best_page_before_any_gets_a_second() -> None:
    scores = {"a1": [0.9, 0.1], "a2": [0.85, 0.1], "a3": [0.8, 0.1], "b1": [0.1, 0.5]}
    whole = {u: 0.5 for u in scores}
    chosen = facet_choice([["a1", "a2", "a3"], ["b1"]], scores, whole, ["a1", "a2", "a3"], 3)
    assert chosen[:2] == ["a1", "b1"] and len(chosen) == 3


def test_the_offline_planner_keeps_the_topic_in_every_clause_query() -> None:
    """A clause of status words alone ("which features were proposed, accepted") matches
    every page that declares a status; with the question's topic it asks about it."""
    from core.writers.offline import OfflineWriter

    question = (
        "How is static typing in Python evolving: which type-system features were "
        "proposed, accepted, or finalised, and what is still open?"
    )
    queries = OfflineWriter().plan_queries(question, 4)
    assert queries[0] == question
    assert queries[1] == "static typing Python"
    assert all(q.endswith("static typing Python") for q in queries[1:])
    asking = {"how", "is", "which", "were", "what", "in"}
    assert not any(asking & set(q.casefold().split()) for q in queries[1:])


def test_a_list_of_things_each_asked_about_names_the_facets() -> None:
    """ "which technologies, what costs, …" asks about each thing in turn: those are the
    parts, and a verb after the last one is not part of its name."""
    facets = facets_of(
        "Where does grid-scale battery energy storage stand: which technologies, what "
        "costs, which deployments, and which policies shape it?"
    )
    assert [f.name for f in facets] == ["Technologies", "Costs", "Deployments", "Policies"]
    assert facets[1].query == "costs grid-scale battery energy storage"
    # clauses are not things: a question asking what happened to one thing has no parts
    assert (
        facets_of(
            "How is static typing in Python evolving: which type-system features were "
            "proposed, accepted, or finalised, and what is still open?"
        )
        == []
    )
    assert facets_of("Storage in 2026: which projects are built, what costs apply?") == []
