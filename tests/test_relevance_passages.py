"""A page is scored by its best passages as well as its opening: a long templated page
whose first 2,000 characters are a metadata header and a table of contents is still
found on topic by what its body says (FirstP vs MaxP)."""

from __future__ import annotations

from core.domain.relevance import RELEVANCE_MIN, Relevance
from core.domain.relevance_passages import (
    MAX_PASSAGES,
    OPENING_CHARS,
    PASSAGE_CHARS,
    page_passages,
)

QUESTION = (
    "How is Kubernetes changing the way containers in a pod start, restart and shut down: "
    "native sidecar containers, lifecycle hooks, health probes?"
)

_HEADER = "\n".join(
    [
        "---",
        "title: Sidecar Containers",
        "kep-number: 753",
        "authors: a-person, another-person",
        "owning-sig: sig-node",
        "status: implementable",
        "creation-date: 2018-05-14",
        "reviewers: someone, someone-else",
        "approvers: a-lead",
        "stage: beta",
        "latest-milestone: v1.29",
        "---",
        "",
    ]
)
_TOC = "\n".join(
    f"- [{name}](#{name.lower().replace(' ', '-')})"
    for name in [
        "Release Signoff Checklist",
        "Summary",
        "Motivation",
        "Goals",
        "Non-Goals",
        "Proposal",
        "User Stories",
        "Story 1",
        "Story 2",
        "Notes and Constraints",
        "Risks and Mitigations",
        "Design Details",
        "Test Plan",
        "Prerequisite testing",
        "Unit tests",
        "Integration tests",
        "e2e tests",
        "Graduation Criteria",
        "Alpha",
        "Beta",
        "GA",
        "Upgrade and Downgrade Strategy",
        "Version Skew Strategy",
        "Production Readiness Review Questionnaire",
        "Feature Enablement and Rollback",
        "Rollout, Upgrade and Rollback Planning",
        "Monitoring Requirements",
        "Dependencies",
        "Scalability",
        "Troubleshooting",
        "Implementation History",
        "Drawbacks",
        "Alternatives",
        "Infrastructure Needed",
    ]
)
_CHECKLIST = "\n".join(
    f"- [ ] Checklist item {i}: the release team has signed off on this part" for i in range(30)
)
_BODY = """
## Summary

Sidecar containers are a new type of container that start before the main containers of a
pod and keep running for the pod's whole life. A sidecar is declared as an init container
with a restart policy of Always: the kubelet starts it in order with the other init
containers, restarts it when it exits, and shuts it down after the main containers stop.

## Motivation

Service meshes, log shippers and proxies run beside an application container. Without
native sidecars their start and shutdown order is not defined: a proxy may exit before the
application finishes, and a job never completes because its sidecar keeps running. Startup,
liveness and readiness probes apply to sidecars, and preStop lifecycle hooks run when the
pod terminates, so a sidecar drains its connections before it is stopped.
"""
TEMPLATED = _HEADER + "\n## Table of Contents\n\n" + _TOC + "\n\n" + _CHECKLIST + "\n" + _BODY
OFF_TOPIC = """\
A community forum for the project

## Summary

This proposal moves the project's discussions from a mailing list to a hosted forum. The
forum has categories for announcements, user questions and contributor discussions, and
single sign-on with the project's code hosting accounts. Moderators are chosen by the
steering committee; the mailing list stays open in read-only mode for a year.
"""


def test_the_opening_of_a_templated_page_is_its_header_and_contents() -> None:
    units = page_passages(TEMPLATED)
    assert "kep-number" in units[0] and "Sidecar containers are" not in units[0]
    assert any("Sidecar containers are a new type of container" in u for u in units[1:])
    assert all(len(u) <= PASSAGE_CHARS for u in units[1:])
    assert len(units[0]) <= OPENING_CHARS


def test_a_templated_page_is_scored_by_its_best_passages() -> None:
    relevance = Relevance(QUESTION)
    pages = {"kep": ("Sidecar Containers", TEMPLATED), "forum": ("Community forum", OFF_TOPIC)}
    by_opening = relevance.scores([f"Sidecar Containers. {page_passages(TEMPLATED)[0]}"])[0]
    scores = relevance.page_scores(pages)
    # by its header and contents alone it would not even be about the question
    assert by_opening < RELEVANCE_MIN <= scores["kep"] and scores["kep"] > by_opening + 0.1
    assert scores["kep"] > scores["forum"]
    # the lexical half reads the same passages: the templated page ranks first
    hybrid = relevance.hybrid_scores(pages, scores, with_feedback=False)
    assert hybrid["kep"] > hybrid["forum"]


def test_passages_are_bounded_whatever_the_page() -> None:
    huge = ("word " * 50 + "\n\n") * 5_000 + "x" * 300_000  # long paragraphs, one endless line
    units = page_passages(huge)
    assert len(units) == MAX_PASSAGES + 1
    assert all(len(u) <= max(PASSAGE_CHARS, OPENING_CHARS) for u in units)
    assert page_passages("") == [""]
    assert page_passages("Short page.") == ["Short page."]


def test_the_passage_cache_serves_more_pages_than_it_keeps(monkeypatch) -> None:
    from core.domain import relevance_passages as rp
    from core.domain.relevance import _embed

    monkeypatch.setattr(rp, "PASSAGE_CACHE", 3)
    monkeypatch.setattr(rp, "_PASSAGES", {})
    pages = [(f"Page {i}", f"Text about widgets number {i}. " * 40) for i in range(8)]
    first = rp.passage_vectors(pages, _embed)
    again = rp.passage_vectors([*pages[::-1], pages[0]], _embed)  # some cached, some evicted
    assert len(first) == 8 and len(again) == 9 and len(rp._PASSAGES) == 3
    assert (again[-1][1] == first[0][1]).all() and again[0][0] == first[7][0]
