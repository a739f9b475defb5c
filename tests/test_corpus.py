"""Temporal corpora: import, as-of search and fetch, bad input."""

from __future__ import annotations

import gzip
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.config import corpora_dir
from core.dates import parse_as_of
from core.errors import EvergreenError, NotFoundError
from core.sources.base import PageNotFound
from core.sources.corpus import Corpus, add_corpus, list_corpora
from tests.conftest import peps_slice, write_jsonl

RECORDS = [
    {
        "url": "https://ex.org/a",
        "title": "Alpha storage",
        "as_of": "2024-01-01",
        "content": "Alpha battery costs 142 dollars per kWh. Status: proposed.",
    },
    {
        "url": "https://ex.org/a",
        "title": "Alpha storage",
        "as_of": "2024-06-01",
        "content": "Alpha battery costs 128 dollars per kWh. Status: approved.",
    },
    {
        "url": "https://ex.org/b",
        "title": "Beta flow battery",
        "as_of": "2024-03-01",
        "content": "Beta vanadium flow battery pilot in construction.",
    },
    {"url": "https://ex.org/b", "title": "Beta flow battery", "as_of": "2024-09-01", "gone": True},
]


def test_jsonl_import_is_idempotent(workspace: Path, tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "c.jsonl", RECORDS)
    first = add_corpus("t", src)
    assert (first.read, first.inserted, first.unchanged) == (4, 4, 0)
    again = add_corpus("t", src)
    assert (again.inserted, again.updated, again.unchanged) == (0, 0, 4)
    assert list_corpora()[0]["versions"] == 4


def test_reimport_with_edit_updates_in_place(workspace: Path, tmp_path: Path) -> None:
    add_corpus("t", write_jsonl(tmp_path / "c.jsonl", RECORDS))
    edited = [dict(r) for r in RECORDS]
    edited[0]["content"] = "Alpha battery costs 150 dollars per kWh."
    result = add_corpus("t", write_jsonl(tmp_path / "d.jsonl", edited))
    assert (result.updated, result.unchanged) == (1, 3)
    corpus = Corpus.open("t")
    assert "150" in corpus.fetch("https://ex.org/a", parse_as_of("2024-02-01")).content
    assert corpus.search("150 dollars", end_date=parse_as_of("2024-02-01"))[0].url == (
        "https://ex.org/a"
    )


def test_fetch_as_of(workspace: Path, tmp_path: Path) -> None:
    add_corpus("t", write_jsonl(tmp_path / "c.jsonl.gz", RECORDS, gz=True))
    corpus = Corpus.open("t")
    assert "142" in corpus.fetch("https://ex.org/a", parse_as_of("2024-05-31")).content
    assert "128" in corpus.fetch("https://ex.org/a", parse_as_of("2024-06-01")).content
    with pytest.raises(PageNotFound, match="not found at 2023-12-31"):
        corpus.fetch("https://ex.org/a", parse_as_of("2023-12-31"))
    with pytest.raises(PageNotFound, match="removed"):
        corpus.fetch("https://ex.org/b", parse_as_of("2024-12-31"))


def test_search_honours_time(workspace: Path, tmp_path: Path) -> None:
    add_corpus("t", write_jsonl(tmp_path / "c.jsonl", RECORDS))
    corpus = Corpus.open("t")
    early = corpus.search("battery", end_date=parse_as_of("2024-01-31"))
    assert [h.url for h in early] == ["https://ex.org/a"]
    mid = corpus.search("battery", end_date=parse_as_of("2024-07-01"))
    assert {h.url for h in mid} == {"https://ex.org/a", "https://ex.org/b"}
    assert all(h.snippet and h.title and h.date for h in mid)
    # the gone page disappears; the window filter keeps only pages updated after start
    late = corpus.search("battery", end_date=parse_as_of("2024-12-31"))
    assert [h.url for h in late] == ["https://ex.org/a"]
    window = corpus.search(
        "battery", start_date=parse_as_of("2024-02-01"), end_date=parse_as_of("2024-07-01")
    )
    assert {h.url for h in window} == {"https://ex.org/a", "https://ex.org/b"}
    # each hit says when its page first appeared: A was only edited in the window
    first = {h.url: h.first_seen for h in window}
    assert first == {
        "https://ex.org/a": datetime(2024, 1, 1, tzinfo=UTC),
        "https://ex.org/b": datetime(2024, 3, 1, tzinfo=UTC),
    }
    narrow = corpus.search(
        "battery", start_date=parse_as_of("2024-06-01"), end_date=parse_as_of("2024-07-01")
    )
    assert narrow == []
    assert corpus.search("the and of", end_date=parse_as_of("2024-07-01")) == []


def test_folder_import(workspace: Path, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.md").write_text(
        "---\nurl: https://ex.org/x\ntitle: X page\ndate: 2025-02-03\n---\n# Ignored\nSodium-ion.\n"
    )
    (folder / "sub" / "b.txt").write_text("# Heading title\nIron-air batteries.\n")
    os.utime(folder / "sub" / "b.txt", (1700000000, 1700000000))
    (folder / "c.html").write_text(
        "<html><head><title>HTML page</title><script>evil()</script></head>"
        "<body><p>Thermal storage.</p></body></html>"
    )
    (folder / "skip.pdf").write_bytes(b"%PDF")
    result = add_corpus("docs", folder)
    assert result.inserted == 3
    corpus = Corpus.open("docs")
    page = corpus.fetch("https://ex.org/x", parse_as_of("2025-02-03"))
    assert page.title == "X page" and "Sodium-ion." in page.content and "url:" not in page.content
    local = corpus.fetch("local://docs/sub/b.txt")
    assert local.title == "Heading title" and local.published.year == 2023
    html = corpus.fetch("local://docs/c.html")
    assert html.title == "HTML page" and "Thermal storage." in html.content
    assert "evil" not in html.content


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"title": "t", "as_of": "2024-01-01", "content": "x"}', "line 2: missing 'url'"),
        ('{"url": "https://e/x", "as_of": "2024-01-01"}', "line 2: missing 'content'"),
        ('{"url": "https://e/x", "as_of": "31/12/2024", "content": "x"}', "line 2: Invalid date"),
        ("{not json", "line 2: not valid JSON"),
    ],
)
def test_bad_jsonl_line_aborts_with_line_number(
    workspace: Path, tmp_path: Path, line: str, message: str
) -> None:
    good = '{"url": "https://e/ok", "title": "ok", "as_of": "2024-01-01", "content": "fine"}'
    src = tmp_path / "bad.jsonl"
    src.write_text(f"{good}\n{line}\n{good.replace('ok', 'ok2')}\n")
    with pytest.raises(EvergreenError, match=message):
        add_corpus("bad", src)
    assert "bad" not in names()  # a failed first import registers nothing
    with pytest.raises(NotFoundError):
        Corpus.open("bad")
    result = add_corpus("bad", src, skip_bad=True)
    assert result.inserted == 2 and len(result.skipped) == 1 and "line 2" in result.skipped[0]
    with pytest.raises(EvergreenError, match=message):  # a failed later import …
        add_corpus("bad", src)
    assert Corpus.open("bad").stats()["versions"] == 2  # … leaves what it had


def names() -> list[str]:
    return [c["name"] for c in list_corpora()]


def test_a_file_with_no_page_registers_no_corpus(workspace: Path, tmp_path: Path) -> None:
    """A junk or empty file (or one whose every line is skipped) is refused in one line
    and leaves no empty corpus behind to show in the app's source list."""
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    with pytest.raises(EvergreenError, match="Nothing to import .* 'junk' was not created"):
        add_corpus("junk", empty)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    with pytest.raises(EvergreenError, match=r"Nothing to import .*\(1 skipped\)"):
        add_corpus("junk", bad, skip_bad=True)
    assert "junk" not in names()
    assert not list(corpora_dir().glob("junk.sqlite*"))


def test_non_utf8_and_corrupt_gzip(workspace: Path, tmp_path: Path) -> None:
    raw = tmp_path / "latin.jsonl"
    raw.write_bytes(b'{"url": "https://e/x", "as_of": "2024-01-01", "content": "caf\xe9"}\n')
    with pytest.raises(EvergreenError, match="line 1: not valid UTF-8"):
        add_corpus("x", raw)
    broken = tmp_path / "broken.jsonl.gz"
    data = gzip.compress(b'{"url": "https://e/x", "as_of": "2024-01-01", "content": "x"}\n' * 50)
    broken.write_bytes(data[: len(data) // 2])
    with pytest.raises(EvergreenError, match="not a readable gzip file"):
        add_corpus("x", broken)
    with pytest.raises(NotFoundError, match="No such file"):
        add_corpus("x", tmp_path / "missing.jsonl")
    with pytest.raises(EvergreenError, match="Invalid corpus name"):
        add_corpus("../evil", raw)


def test_unknown_corpus(workspace: Path) -> None:
    with pytest.raises(NotFoundError, match="No corpus named 'nope'"):
        Corpus.open("nope")


def test_real_peps_as_of(workspace: Path, tmp_path: Path) -> None:
    """PEP 563's status at two dates, and a 2024 PEP invisible at 2023-12-31."""
    add_corpus("peps", peps_slice(tmp_path, {563, 742, 484}))
    corpus = Corpus.open("peps")
    url = "https://peps.python.org/pep-0563/"
    assert "Status: Accepted" in corpus.fetch(url, parse_as_of("2023-12-31")).content
    assert "Status: Superseded" in corpus.fetch(url, parse_as_of("2025-12-31")).content
    q = "Narrowing types with TypeIs"
    assert all("0742" not in h.url for h in corpus.search(q, end_date=parse_as_of("2023-12-31")))
    hits = corpus.search(q, end_date=parse_as_of("2024-12-31"))
    assert hits[0].url == "https://peps.python.org/pep-0742/"
    with pytest.raises(PageNotFound):
        corpus.fetch("https://peps.python.org/pep-0742/", parse_as_of("2023-12-31"))
