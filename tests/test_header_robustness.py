"""Header readers never crash (issue 41, item 3).

A real page declared ``created: 2017-28-08`` in its YAML front matter: PyYAML's timestamp
constructor raised ``ValueError: month must be in 1..12``, uncaught, and ``evergreen
update`` died while pruning. Every reader of a page's header now reads such a value — a date
that is no date, a list, a nested map, a bad encoding — as text, with one warning in the
log. Generated headers go through every reader; so does every page version of every public
corpus in ``../shared/corpora``.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.domain import (
    declared_fields,
    header_blocks,
    header_changes,
    headers,
    keyfacts,
    page_units,
    report_parse,
)
from core.domain.head_lines import split_lines
from core.errors import EvergreenError

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"


def _lines(text: str) -> list[str]:
    return text.split("\n")


def _split_front_matter(text: str) -> object:
    try:
        return headers.split_front_matter(text)
    except ValueError as exc:  # its contract: a block of fields that is not YAML is refused
        assert str(exc).startswith("front matter is "), exc
        return None


def _parse_markdown(text: str) -> object:
    try:
        return report_parse.parse_markdown(text)
    except EvergreenError:  # an import's one-line refusal (an empty file), not a crash
        return None


def _yaml_fields(text: str) -> object:
    lines = _lines(text)
    fields, data, _error = headers.read_yaml_fields(lines, 0, len(lines))
    assert isinstance(data, dict)
    return fields


def _blocks(text: str) -> object:
    blocks = header_blocks.header_blocks(text)
    for block in blocks:
        for fact in block.facts:
            assert isinstance(fact.value, str) and isinstance(fact.label, str)
    return blocks


#: every reader of a page's or a report's header, as text -> anything
READERS: dict[str, Callable[[str], object]] = {
    "read_rfc822": lambda t: headers.read_rfc822(_lines(t)),
    "read_rfc822 lenient": lambda t: headers.read_rfc822(_lines(t), lenient=True),
    "read_yaml_fields": _yaml_fields,
    "front_matter": lambda t: headers.front_matter(_lines(t)),
    "split_front_matter": _split_front_matter,
    "split_lines": lambda t: split_lines(t, 40),
    "header_blocks": _blocks,
    "page_body": header_blocks.page_body,
    "read_key_facts": lambda t: keyfacts.read_key_facts(t, {"created": date(2020, 1, 1)}),
    "header_fields": keyfacts.header_fields,
    "declared_line": lambda t: keyfacts.declared_line("T", t),
    "key_fact_reasons": lambda t: header_changes.key_fact_reasons(
        t, "Status: Final\nType: x\n\nBody.", None, None
    ),
    "field_of": lambda t: [declared_fields.field_of(line) for line in _lines(t)],
    "stated_fields": declared_fields.stated_fields,
    "field_value": declared_fields.field_value,
    "page_units.split_sentences": page_units.split_sentences,
    "parse_markdown": _parse_markdown,
}


def _read_all(text: str) -> None:
    for name, reader in READERS.items():
        try:
            reader(text)
        except Exception as exc:  # noqa: BLE001 - named below
            raise AssertionError(f"{name} raised {exc!r} on {text[:300]!r}") from exc


KEYS = ["title", "status", "Status", "created", "Created", "date", "type", "Author", "stage"]
BAD_VALUES = [
    "2017-28-08",  # the issue's: no 28th month
    "2001-99-99 10:00:00",
    "2001-12-14t21:59:43.10-99:00",
    "!!timestamp 2001-02-30",
    "!!int abc",
    "!!float x",
    "!!bool maybe",
    "!!binary not base64!",
    "!!str [1]",
    "!!map [1]",
    "!!omap {a: 1}",
    "!!python/name:os.system",
    "!!set {a}",
    "&a [*a]",
    "*nothing",
    "[a, b",
    "[a, [b, {c: d}]]",
    "{a: b, c: [d]}",
    "{[1]: 2}",
    "'unterminated",
    '"bad \\x escape"',
    "a: b: c",
    "|",
    ">-",
    "1e999999",
    "0o99",
    "12:99:99",
    "\udcff\udcfe",  # bytes read with surrogateescape
    "=?utf-8?q?=FF=FE?=",  # an RFC 2047 word of bytes that are no UTF-8
    "=?x-unknown?b?!!!?=",
    "=?utf-8?b?",
    "\x00\x01\x7f",
    "\ufeff",
    "é\u2028x\u2029y\x85z",
]
key = st.one_of(st.sampled_from(KEYS), st.from_regex(r"[A-Za-z_][\w .-]{0,12}", fullmatch=True))
value = st.one_of(
    st.sampled_from(BAD_VALUES),
    st.text(max_size=30),
    st.binary(max_size=30).map(lambda b: b.decode("utf-8", "surrogateescape")),
    st.binary(max_size=30).map(lambda b: b.decode("latin-1")),
)
separator = st.sampled_from([": ", ":", ":\t", "\t: ", " : ", ":  "])
continuation = st.sampled_from(["", "\n  - a", "\n  - b\n  - c", "\n  x: y", "\n\tmore", "\n - "])
field = st.tuples(
    st.sampled_from(["", "", "- ", "* ", "**"]), key, separator, value, continuation
).map(lambda f: f"{f[0]}{f[1]}{f[2]}{f[3]}{f[4]}")
fields = st.lists(field, min_size=1, max_size=12).map("\n".join)
layout = st.sampled_from(
    [
        "---\n{}\n---\n\nBody text.",  # front matter
        "---\n{}\n",  # never closed
        "---\n{}\n...\nBody.",
        "{}\n---\nBody.",  # a block closed by ---
        "{}\n\nBody text. Status: Final.",  # RFC-822
        "\ufeff{}\n\nBody.",
        "# Title\n\n{}\n\nBody.",
        "<pre>\n{}\n</pre>\n\nBody.",
        "| {} |\n|---|---|\n| a | b |",
        "{}",
    ]
)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(layout=layout, body=fields)
def test_generated_headers_never_crash_a_reader(layout: str, body: str) -> None:
    _read_all(layout.replace("{}", body))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blob=st.binary(min_size=1, max_size=400))
def test_binary_never_crashes_a_reader(blob: bytes) -> None:
    for text in (blob.decode("utf-8", "surrogateescape"), blob.decode("latin-1")):
        _read_all(text)
        _read_all("---\n" + text + "\n---\n")


@pytest.mark.parametrize(
    "text",
    [
        "---\n" + "".join(f"key{n}: {n}\n" for n in range(10_000)) + "---\nBody.",  # 10,000 keys
        "".join(f"Key{n}: v\n" for n in range(10_000)) + "\nBody.",
        "---\n" + "status: Draft\nstatus: Final\ncreated: 2017-28-08\n" * 50 + "---\n",
        "---\n" + "a:\n" + "  - [" * 5_000 + "\n---\n",  # deep nesting
        "---\n" + "\t" * 200 + "status:\tFinal\n\t---\n",
    ],
    ids=["10000-yaml-keys", "10000-rfc822-keys", "duplicated-keys", "deep-nesting", "tabs"],
)
def test_large_and_odd_headers_never_crash_a_reader(text: str) -> None:
    _read_all(text)


def test_an_invalid_date_is_text_with_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    """The issue's page: its header is read, ``created`` as written, and the log says so
    once; the valid date beside it stays a date."""
    text = "---\ntitle: A proposal\nstatus: Draft\ncreated: 2017-28-08\ndate: 2017-08-28\n---\n"
    with caplog.at_level(logging.WARNING, logger="core.domain.headers"):
        meta, body = headers.split_front_matter(text + "Body.")
    assert meta == {
        "title": "A proposal",
        "status": "Draft",
        "created": "2017-28-08",
        "date": date(2017, 8, 28),
    }
    assert body == "Body."
    warnings = [r for r in caplog.records if r.name == "core.domain.headers"]
    assert len(warnings) == 1 and "2017-28-08" in warnings[0].getMessage()
    facts = {f.key: f.value for f in keyfacts.read_key_facts(text + "Body text.")}
    assert facts["created"] == "2017-28-08" and facts["status"] == "Draft"


def _corpus_files() -> list[Path]:
    return sorted(CORPORA.glob("*/*_corpus.jsonl.gz"))


@pytest.mark.slow  # real processes / whole corpora
def test_every_page_of_every_public_corpus_is_read_without_an_exception() -> None:
    """Every page version of the peps, swift and bips corpora through the readers a page's
    header goes through in an update (cached: each distinct text once)."""
    files = _corpus_files()
    if not files:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI has the public corpora, but {CORPORA} holds none")
        pytest.skip(f"no public corpora at {CORPORA}")
    pages = 0
    failures: list[str] = []
    for path in files:
        with gzip.open(path, "rt", encoding="utf-8") as lines:
            for line in lines:
                record = json.loads(line)
                content = record.get("content") or ""
                pages += 1
                try:
                    keyfacts.read_key_facts(content)
                    header_blocks.page_body(content)
                    headers.front_matter(content.split("\n", 200)[:200])
                    _split_front_matter(content)
                except Exception as exc:  # noqa: BLE001 - listed below
                    failures.append(
                        f"{path.name} {record.get('url')} {record.get('as_of')}: {exc!r}"
                    )
    assert pages > 1000, pages
    assert not failures, f"{len(failures)} of {pages} pages: " + "; ".join(failures[:5])
