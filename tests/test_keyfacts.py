"""Tests for core.domain.keyfacts: the key facts a page declares, and how the classifier
uses them."""

from __future__ import annotations

import gzip
import json
import time
from pathlib import Path

import pytest

from core.domain.changes import classify_change
from core.domain.header_blocks import header_blocks
from core.domain.key_fact import KeyFact, typed
from core.domain.keyfacts import fact_changes, fact_map, header_fields, read_key_facts
from core.domain.material import material_reasons
from core.domain.page_units import split_sentences

CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"
SWIFT_CORPUS = CORPORA / "swift" / "swift_corpus.jsonl.gz"
PEP_CORPUS = CORPORA / "peps" / "peps_corpus.jsonl.gz"

PEP_HEADER = """\
PEP: 999
Title: A Made-Up Proposal
Author: Jane Doe <jane@example.org>
Status: Accepted
Type: Standards Track
Content-Type: text/x-rst
Version: $Revision$
Created: 01-Mar-2026
Python-Version: 3.15
Post-History: 02-Mar-2026,
              09-Apr-2026


Abstract
========

This PEP proposes a new ``frobnicate`` builtin for Python. It was discussed at length.
A survey of 142 projects found that most of them re-implement the same loop.
"""

SWIFT_PAGE = """\
# Actors

* Proposal: [SE-0306](0306-actors.md)
* Authors: [John McCall](https://github.com/rjmccall), [Joe Groff](https://github.com/jckarter),
           [Doug Gregor](https://github.com/DougGregor)
* Review Manager: [Ben Cohen](https://github.com/airspeedswift)
* Status: **Accepted**
* [Previous revision](https://github.com/swiftlang/swift-evolution/blob/abc/proposals/0306.md)
* Implementation: Partially available in [recent `main` snapshots](https://swift.org/download)

## Introduction

The Swift concurrency model already offers asynchronous functions and structured tasks.
This proposal introduces actors, which protect their mutable state from data races.

## Motivation

One of the more difficult problems in developing concurrent programs is dealing with data
races. A data race occurs when the same data in memory is accessed by two concurrently
executing threads, at least one of which is writing to that memory. When this occurs, the
program may behave erratically, including spurious crashes or program errors due to
corrupted internal state. Actors provide a model for isolating state: each actor protects
its own data, ensuring that only a single thread will access that data at a given time.

## Proposed solution

An actor is a reference type that protects access to its mutable state, and is introduced
with the keyword `actor`. Like other Swift types, actors can have initializers, methods,
properties, and subscripts. They can be extended and conform to protocols, be generic, and
be used with generics. The primary difference is that actors protect their state from
data races. This is enforced statically by the Swift compiler through a set of limitations
on the way in which actors and their instance members can be used, collectively called
actor isolation.
"""

KEP_PAGE = """\
title: In-place update of pod resources
kep-number: 1287
authors:
  - "@vinaykul"
owning-sig: sig-node
status: implementable
stage: beta
latest-milestone: v1.33
---

# KEP-1287: In-Place Update of Pod Resources

## Summary

This proposal aims at allowing Pod resource requests and limits to be updated in-place,
without a need to restart the Pod or its Containers. The core idea behind the proposal is
to make PodSpec mutable with regards to Resources, denoting desired resources.

## Motivation

Resources allocated to a Pod's Container(s) can require a change for various reasons: load
handled by the Pod has increased significantly, and current resources are not sufficient;
load has decreased significantly, and allocated resources are unused; resources have simply
been set improperly. Currently, changing resource allocation requires the Pod to be
recreated since the PodSpec's Container Resources is immutable. While many stateless
workloads are designed to withstand such a disruption, some are more sensitive, especially
when using a low number of Pod replicas. Moreover, for stateful or batch workloads, a Pod
restart is a serious disruption, resulting in lower availability or higher cost of running.

## Goals

Allow for changing container resource requests and limits without restart, and allow the
user to specify when a container should be restarted when resources are resized.
"""

PROJECT_PAGE = """\
- Developer: Larchmont Energy Partners
- Location: Copperline Valley, central Halvard Interconnection
- Capacity: 100 MW / 400 MWh
- Technology: lithium iron phosphate; supplier not yet selected
- Status: Proposed
- Expected commercial operation: Q4 2027

## Overview

Copperline Storage Park is a standalone battery project in the central Halvard region.
"""


def _facts(content: str) -> dict[str, KeyFact]:
    return fact_map(read_key_facts(content))


def _assert_raw_exact(content: str, facts: list[KeyFact]) -> None:
    for fact in facts:
        if fact.start >= 0:
            assert content[fact.start : fact.start + len(fact.raw)] == fact.raw, fact


# --------------------------------------------------------------------------- layouts


def test_rfc822_header_block():
    facts = read_key_facts(PEP_HEADER)
    _assert_raw_exact(PEP_HEADER, facts)
    by_key = fact_map(facts)
    assert [f.key for f in facts][:4] == ["pep", "title", "author", "status"]
    assert by_key["status"] == KeyFact(
        "status", "Status", "Accepted", "status", "Status: Accepted", PEP_HEADER.index("Status:")
    )
    assert by_key["python-version"].kind == "version"
    assert by_key["created"].kind == "date"
    assert by_key["type"].kind == "other"
    # housekeeping: a VCS placeholder and a post history are never typed
    assert by_key["version"].kind == "other"
    assert by_key["post-history"].kind == "other"
    assert by_key["post-history"].value == "02-Mar-2026, 09-Apr-2026"
    assert by_key["post-history"].raw == "Post-History: 02-Mar-2026,\n              09-Apr-2026"
    assert "abstract" not in by_key
    assert [b.layout for b in header_blocks(PEP_HEADER)] == ["rfc822"]


def test_yaml_front_matter():
    page = (
        "---\n"
        'title: "Battery storage outlook"\n'
        "status: draft\n"
        "date: 2026-03-01\n"
        "tags:\n"
        "  - storage\n"
        "  - grid\n"
        "# a comment\n"
        "---\n\n"
        "# Outlook\n\nText.\n"
    )
    facts = read_key_facts(page)
    _assert_raw_exact(page, facts)
    by_key = fact_map(facts)
    assert by_key["title"].value == "Battery storage outlook"
    assert (by_key["status"].value, by_key["status"].kind) == ("draft", "status")
    assert by_key["date"].kind == "date"
    assert by_key["tags"].value == "storage, grid"  # a YAML list: its items, each one
    assert by_key["tags"].raw == "tags:\n  - storage\n  - grid"
    block = header_blocks(page)[0]
    assert block.layout == "front-matter"
    assert page[block.start : block.end].startswith("---\ntitle")
    assert page[block.start : block.end].endswith("storage\n  - grid\n# a comment\n---")


def test_key_value_block_closed_by_dashes():
    facts = read_key_facts(KEP_PAGE)
    _assert_raw_exact(KEP_PAGE, facts)
    by_key = fact_map(facts)
    assert header_blocks(KEP_PAGE)[0].layout == "closed-block"
    assert (by_key["status"].value, by_key["status"].kind) == ("implementable", "status")
    assert (by_key["stage"].value, by_key["stage"].kind) == ("beta", "stage")
    assert by_key["latest-milestone"].kind == "milestone"
    assert by_key["authors"].value == "@vinaykul"
    assert "summary" not in by_key
    # neither closed by "---" nor ended by a blank line: not a header block
    assert read_key_facts(KEP_PAGE.replace("---\n\n", "", 1)) == []


def test_markdown_bullet_header_after_title():
    facts = read_key_facts(SWIFT_PAGE)
    _assert_raw_exact(SWIFT_PAGE, facts)
    assert [f.key for f in facts] == [
        "proposal",
        "authors",
        "review-manager",
        "status",
        "implementation",
    ]  # the key-less "Previous revision" bullet is skipped
    by_key = fact_map(facts)
    assert by_key["proposal"].value == "SE-0306"
    assert by_key["authors"].value == "John McCall, Joe Groff, Doug Gregor"
    assert by_key["authors"].raw.endswith("[Doug Gregor](https://github.com/DougGregor)")
    assert by_key["review-manager"].label == "Review Manager"
    assert by_key["review-manager"].kind == "other"
    assert by_key["status"].value == "Accepted"
    assert by_key["status"].raw == "* Status: **Accepted**"
    assert by_key["implementation"].value == "Partially available in recent main snapshots"


def test_bullet_capacity_fact_raw_is_the_exact_line():
    facts = read_key_facts(PROJECT_PAGE)
    capacity = fact_map(facts)["capacity"]
    assert capacity.raw == "- Capacity: 100 MW / 400 MWh"
    assert PROJECT_PAGE[capacity.start : capacity.start + len(capacity.raw)] == capacity.raw
    assert (capacity.label, capacity.value, capacity.kind) == (
        "Capacity",
        "100 MW / 400 MWh",
        "other",
    )
    assert fact_map(facts)["expected-commercial-operation"].kind == "milestone"
    assert fact_map(facts)["status"].kind == "status"
    # the same with Windows line endings: offsets still point at the exact source text
    crlf = PROJECT_PAGE.replace("\n", "\r\n")
    capacity = fact_map(read_key_facts(crlf))["capacity"]
    assert crlf[capacity.start : capacity.start + len(capacity.raw)] == capacity.raw
    assert capacity.raw == "- Capacity: 100 MW / 400 MWh"


def test_bold_key_lines():
    page = "# PEP-like note\n\n**Status:** Final\n\n**Type**: Informational\n\nThe body.\n"
    facts = read_key_facts(page)
    _assert_raw_exact(page, facts)
    assert [(f.key, f.value, f.kind) for f in facts] == [
        ("status", "Final", "status"),
        ("type", "Informational", "other"),
    ]


def test_definition_table():
    page = (
        "# Storage permit 42\n\n"
        "| Field | Value |\n"
        "| --- | --- |\n"
        "| **Status** | Approved |\n"
        "| Decision date | 12 March 2026 |\n"
        "| Phase | Construction |\n\n"
        "The permit allows a 200 MW battery at the old coal plant site.\n"
    )
    facts = read_key_facts(page)
    _assert_raw_exact(page, facts)
    assert [(f.key, f.value, f.kind) for f in facts] == [
        ("status", "Approved", "status"),
        ("decision-date", "12 March 2026", "date"),
        ("phase", "Construction", "stage"),
    ]
    assert facts[0].raw == "| **Status** | Approved |"
    # a table with more than two columns is data, not a definition table
    wide = page.replace("| Field | Value |", "| Field | Value | Note |")
    assert read_key_facts(wide) == []


def test_html_meta_tags():
    page = (
        "<!DOCTYPE html>\n<html><head>\n"
        '<meta charset="utf-8">\n'
        '<meta name="status" content="Draft">\n'
        '<meta content="2026-02-01" property="article:published_time">\n'
        '<meta name="description" content="A draft &amp; its notes">\n'
        "</head><body><p>Hello</p></body></html>\n"
    )
    facts = read_key_facts(page)
    _assert_raw_exact(page, facts)
    assert [(f.key, f.value, f.kind) for f in facts] == [
        ("status", "Draft", "status"),
        ("article:published-time", "2026-02-01", "date"),
        ("description", "A draft & its notes", "other"),
    ]
    assert facts[0].raw == '<meta name="status" content="Draft">'
    # Markdown that talks about meta tags has none
    assert read_key_facts('Use `<meta name="status" content="x">` in pages.\n') == []


def test_record_meta_facts():
    meta = {
        "url": "https://example.org/p/1",
        "as_of": "2025-12-31T23:59:59Z",
        "content_sha1": "abc",
        "commit": "def",
        "path": "proposals/1.md",
        "is_new": False,
        "changed_since_prev_year": True,
        "pep": 8,
        "se": 306,
        "status": "Accepted",
        "type": "Standards Track",
        "swift_version": "5.5",
        "material_fields": ["status"],
        "headers": {"status": "**Accepted**", "review manager": "[Ben](u)", "other": ["x"]},
    }
    facts = read_key_facts("", meta)
    assert [(f.key, f.value, f.kind) for f in facts] == [
        ("status", "Accepted", "status"),
        ("type", "Standards Track", "other"),
        ("swift-version", "5.5", "version"),
        ("review-manager", "Ben", "other"),
    ]
    assert all(f.raw == "" and f.start == -1 for f in facts)
    # facts in the content win over the record's metadata
    merged = fact_map(read_key_facts("Status: Final\nType: Process\n\nBody.\n", meta))
    assert merged["status"].value == "Final" and merged["status"].start == 0
    assert merged["swift-version"].start == -1


def test_a_lone_status_line_at_the_top():
    page = "Status: Draft for public comment\n\nThe Institute published a draft standard.\n"
    assert [(f.key, f.value) for f in read_key_facts(page)] == [
        ("status", "Draft for public comment")
    ]
    # an untyped lone line, or one further down, is prose
    assert read_key_facts("Note: this is prose.\n\nMore text.\n") == []
    assert read_key_facts("Intro line.\n\nStatus: Draft\n\nMore.\n") == []


def test_no_header_in_prose():
    for text in (
        "",
        "Just prose: with a colon.\n\nMore.",
        "# Service limits\n\nLast updated: March 5, 2026\n\nUploads are limited to 10MB.\n",
        "# Overview\n\nSome text.\n\n- Status: listed further down, not a header\n- Phase: 2\n",
    ):
        assert read_key_facts(text) == [], text


def test_kinds_by_key_and_value():
    page = (
        "- Project status: Operational\n"
        "- Lifecycle stage: Pilot\n"
        "- Target date: 2027-06-30\n"
        "- Release: 2.4\n"
        "- Published: 3 June 2025\n"
        "- Signed on: 2025-06-03\n"
        "- Decision notes: see the forum\n"
        "- Last modified: 2025-06-04\n"
        "- Previous versions: 1, 2\n"
    )
    kinds = {f.key: f.kind for f in read_key_facts(page)}
    assert kinds == {
        "project-status": "status",
        "lifecycle-stage": "stage",
        "target-date": "milestone",
        "release": "version",
        "published": "date",
        "signed-on": "date",  # by value
        "decision-notes": "other",
        "last-modified": "other",  # housekeeping stamp
        "previous-versions": "other",
    }
    assert typed(fact_map(read_key_facts(page))["release"])


# --------------------------------------------------------------------------- fact_changes


def test_fact_changes_normalises_values():
    old = read_key_facts(
        "* Status: **Implemented (Swift 3)**\n* Review Manager: [A](u)\n* Created: 1-Oct-2000\n"
    )
    new = read_key_facts(
        "* Status: Implemented (Swift 3.0)\n* Review Manager: [B](u)\n* Created: 2000-10-01\n"
    )
    assert fact_changes(old, new) == []  # untyped "Review Manager" changes are not listed
    newer = read_key_facts("* Status: Implemented (Swift 3.0.1)\n* Review Manager: [B](u)\n")
    assert fact_changes(old, newer) == [
        ("Status", "Implemented (Swift 3)", "Implemented (Swift 3.0.1)"),
        ("Created", "1-Oct-2000", ""),
    ]
    assert fact_changes([], newer[:1]) == [("Status", "", "Implemented (Swift 3.0.1)")]


# --------------------------------------------------------------------------- classification


def test_closed_block_stage_change_is_material_above_099():
    new = KEP_PAGE.replace("status: implementable", "status: implemented")
    new = new.replace("stage: beta", "stage: stable")
    result = classify_change(KEP_PAGE, new)
    assert result.similarity is not None and result.similarity > 0.99
    assert result.kind == "material"
    assert result.reasons == [
        "header status: implementable → implemented",
        "header stage: beta → stable",
    ]

    page = KEP_PAGE.replace("stage: beta", "Stage: implementable")
    result = classify_change(page, page.replace("Stage: implementable", "Stage: implemented"))
    assert result.similarity is not None and result.similarity > 0.99
    assert result.kind == "material"
    assert result.reasons == ["header Stage: implementable → implemented"]


def test_swift_status_bullet_change_is_material():
    new = SWIFT_PAGE.replace("**Accepted**", "**Implemented (Swift 5.5)**")
    result = classify_change(SWIFT_PAGE, new)
    assert result.similarity is not None and result.similarity > 0.99
    assert result.kind == "material"
    assert result.reasons == ["header Status: Accepted → Implemented (Swift 5.5)"]


def test_swift_version_written_with_trailing_zero_is_not_a_change():
    old = SWIFT_PAGE.replace("**Accepted**", "**Implemented (Swift 3)**")
    new = SWIFT_PAGE.replace("**Accepted**", "**Implemented (Swift 3.0)**")
    assert fact_changes(read_key_facts(old), read_key_facts(new)) == []
    result = classify_change(old, new)
    assert result.kind == "minor", result.reasons
    assert result.reasons == []


def test_bullet_link_rewrites_stay_minor():
    new = SWIFT_PAGE.replace("https://github.com/rjmccall", "https://github.com/rjmc")
    new = new.replace("[Ben Cohen](https://github.com/airspeedswift)", "[Ben Cohen](https://x.y)")
    new = new.replace("blob/abc/", "blob/def/")
    assert classify_change(SWIFT_PAGE, new).kind == "minor"


def test_pep_status_change_is_material():
    new = PEP_HEADER.replace("Status: Accepted", "Status: Superseded")
    result = classify_change(PEP_HEADER, new)
    assert result.kind == "material"
    assert result.reasons == ["header Status: Accepted → Superseded"]
    # a typed fact changes even where the field was housekeeping before
    result = classify_change(PEP_HEADER, PEP_HEADER.replace("01-Mar-2026", "05-Mar-2026"))
    assert result.reasons == ["header Created: 01-Mar-2026 → 05-Mar-2026"]
    result = classify_change(PEP_HEADER, PEP_HEADER.replace("01-Mar-2026", "1-Mar-2026"))
    assert result.kind == "minor"


def test_status_moved_inside_a_rewrite_is_reported():
    new = PEP_HEADER.split("Abstract")[0].replace("Accepted", "Final") + (
        "Summary\n=======\n\nEverything in this document was rewritten from scratch today.\n"
    )
    result = classify_change(PEP_HEADER, new)
    assert result.kind == "changed"
    assert "header Status: Accepted → Final" in result.reasons


def test_meta_only_status_change_is_material():
    page = "The proposal text did not change at all. It still reads the same.\n"
    old_meta = {"status": "Accepted", "headers": {"status": "**Accepted**"}}
    new_meta = {"status": "Implemented (Swift 5.5)", "swift_version": "5.5"}
    result = classify_change(page, page, old_meta=old_meta, new_meta=new_meta)
    assert result.kind == "material"
    assert result.reasons == [
        "header status: Accepted → Implemented (Swift 5.5)",
        "header swift_version: (none) → 5.5",
    ]
    assert classify_change(page, page, old_meta=old_meta, new_meta=old_meta).kind == "unchanged"
    edited = page.replace("at all", "at all, really")
    result = classify_change(page, edited, old_meta=old_meta, new_meta=new_meta)
    assert result.kind == "material"
    assert result.reasons[0] == "header status: Accepted → Implemented (Swift 5.5)"
    assert material_reasons(page, edited) == []


def test_meta_restating_a_content_change_is_not_repeated():
    old = SWIFT_PAGE
    new = SWIFT_PAGE.replace("**Accepted**", "**Implemented (Swift 5.5)**")
    result = classify_change(
        old,
        new,
        old_meta={"status": "Accepted", "status_kind": "accepted"},
        new_meta={"status": "Implemented (Swift 5.5)", "status_kind": "implemented"},
    )
    assert result.reasons == ["header Status: Accepted → Implemented (Swift 5.5)"]


# --------------------------------------------------------------------------- changes.py glue


def test_header_fields_reads_every_layout():
    assert header_fields(SWIFT_PAGE)["status"] == "Accepted"
    assert header_fields(SWIFT_PAGE)["review manager"] == "Ben Cohen"
    assert header_fields(PROJECT_PAGE)["capacity"] == "100 MW / 400 MWh"
    assert header_fields(KEP_PAGE)["status"] == "implementable"
    assert header_fields(PEP_HEADER)["python-version"] == "3.15"


def test_split_sentences_keeps_each_header_field_whole():
    page = SWIFT_PAGE.replace("**Accepted**", "**Accepted.** See the review. Thanks")
    units = split_sentences(page)
    assert units[:8] == [
        "# Actors",
        "* Proposal: [SE-0306](0306-actors.md)",
        "* Authors: [John McCall](https://github.com/rjmccall), [Joe Groff]"
        "(https://github.com/jckarter), [Doug Gregor](https://github.com/DougGregor)",
        "* Review Manager: [Ben Cohen](https://github.com/airspeedswift)",
        "* Status: **Accepted.** See the review. Thanks",
        "* [Previous revision](https://github.com/swiftlang/swift-evolution/blob/abc/proposals/0306.md)",
        "* Implementation: Partially available in [recent `main` snapshots](https://swift.org/download)",
        "## Introduction",
    ]
    units = split_sentences(KEP_PAGE)
    assert units[:8] == [
        "title: In-place update of pod resources",
        "kep-number: 1287",
        'authors: - "@vinaykul"',
        "owning-sig: sig-node",
        "status: implementable",
        "stage: beta",
        "latest-milestone: v1.33",
        "# KEP-1287: In-Place Update of Pod Resources",
    ]


def test_read_key_facts_is_fast_on_a_long_page():
    page = SWIFT_PAGE + "\n".join(
        f"Paragraph {i}: the actor model keeps state isolated. It is checked at compile time."
        for i in range(500)
    )
    assert len(page) > 40_000
    read_key_facts(page)
    runs = 50
    start = time.perf_counter()
    for i in range(runs):
        read_key_facts(page + str(i))  # a new string each time: no cache
    per_call = (time.perf_counter() - start) / runs
    assert per_call < 0.005, per_call  # ~0.2 ms on a quiet machine


# --------------------------------------------------------------------------- real pages


def _records(path: Path, number_key: str, wanted: set[int]) -> dict[int, dict[int, dict]]:
    out: dict[int, dict[int, dict]] = {}
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            if int(rec[number_key]) in wanted:
                out.setdefault(int(rec[number_key]), {})[int(rec["as_of"][:4])] = rec
    return out


@pytest.mark.skipif(not SWIFT_CORPUS.exists(), reason="Swift corpus not available")
def test_real_swift_proposals():
    recs = _records(SWIFT_CORPUS, "se", {132, 371, 2})
    # SE-0371: a one-character edit of the Swift version in the status (similarity 0.99996)
    old, new = recs[371][2024], recs[371][2025]
    facts = read_key_facts(new["content"])
    _assert_raw_exact(new["content"], facts)
    assert fact_map(facts)["status"].value.startswith("Implemented (Swift 6.2)")
    result = classify_change(old["content"], new["content"])
    assert result.kind == "material"
    assert result.reasons == ["header Status: Implemented (Swift 6.1) → Implemented (Swift 6.2)"]
    # SE-0132: Deferred -> Rejected, only the status line changed
    result = classify_change(recs[132][2016]["content"], recs[132][2018]["content"])
    assert result.kind == "material"
    assert "header Status: Deferred → Rejected" in result.reasons
    # SE-0002, 2024: "(Swift 3)" -> "(Swift 3.0)" and apple/ -> swiftlang/ links: housekeeping
    years = sorted(recs[2])
    result = classify_change(recs[2][years[-2]]["content"], recs[2][years[-1]]["content"])
    assert "(Swift 3)**" in recs[2][years[-2]]["content"]
    assert result.kind == "minor", result.reasons
    # the record's own metadata reads the same status
    meta = {k: v for k, v in new.items() if k != "content"}
    assert fact_map(read_key_facts("", meta))["status"].value == new["status"]


@pytest.mark.skipif(not PEP_CORPUS.exists(), reason="PEP corpus not available")
def test_real_peps():
    recs = _records(PEP_CORPUS, "pep", {563, 8})
    for year, rec in recs[8].items():
        facts = read_key_facts(rec["content"])
        _assert_raw_exact(rec["content"], facts)
        assert fact_map(facts)["status"].value == rec["status"], year
    old, new = recs[563][2024], recs[563][2025]
    assert fact_changes(read_key_facts(old["content"]), read_key_facts(new["content"])) == [
        ("Status", "Accepted", "Superseded")
    ]
    old_meta = {k: v for k, v in old.items() if k != "content"}
    new_meta = {k: v for k, v in new.items() if k != "content"}
    result = classify_change(old["content"], new["content"], old_meta=old_meta, new_meta=new_meta)
    assert result.kind == "material"
    assert [r for r in result.reasons if r.startswith("header")] == [
        "header Status: Accepted → Superseded",  # typed facts first
        "header Superseded-By: 649 → 649, 749",  # then other header fields
    ]
