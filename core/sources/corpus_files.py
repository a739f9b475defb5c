"""Reading the files a corpus is imported from: JSONL files of page versions (.jsonl,
.jsonl.gz) and folders of documents (.md, .txt, .html, with optional front matter), each
yielding PageRecords.

A bad record aborts the import with its line (or file) unless ``skip_bad``, in which
case it is skipped and listed.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from core.dates import parse_published
from core.domain.hashing import content_hash
from core.domain.headers import split_front_matter
from core.domain.untrusted import strip_bidi
from core.errors import EvergreenError
from core.sources.base import canonical_url

FOLDER_SUFFIXES = {".md", ".markdown", ".txt", ".html", ".htm"}


@dataclass(frozen=True)
class PageRecord:
    """One version of one page, as read from an import file."""

    url: str
    title: str
    as_of: datetime
    content: str
    gone: bool = False
    meta: dict[str, Any] | None = None

    @property
    def content_hash(self) -> str:
        return content_hash(self.content)


def _problem(skipped: list[str], skip_bad: bool, where: str, message: str) -> None:
    if not skip_bad:
        raise EvergreenError(
            f"{where}: {message} (nothing was imported; --skip-bad skips such records)"
        )
    skipped.append(f"{where}: {message}")


PAGE_SCHEMES = ("http", "https", "local")  # web pages, and a folder corpus's own pages


def page_url(url: str) -> str:
    """The canonical spelling of a page's address; ValueError for any scheme but http(s)
    and ``local://`` (a ``javascript:`` or ``data:`` page would become a live link in every
    report that cites it)."""
    scheme = urlsplit(url.strip()).scheme.lower()
    if scheme not in PAGE_SCHEMES:
        shown = url.strip()[:80]
        raise ValueError(
            f"url {shown!r} is not a web page: only http(s) and local:// addresses are accepted"
        )
    return canonical_url(url)


def _record_from_obj(obj: Any, where: str) -> PageRecord:
    if not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    url = obj.get("url")
    if not isinstance(url, str) or not url.strip():
        raise ValueError("missing 'url'")
    page_url(url)  # refuses any scheme but http(s) and local://
    gone = bool(obj.get("gone"))
    content = obj.get("content")
    if content is None and not gone:
        raise ValueError("missing 'content'")
    if not isinstance(content, str | type(None)):
        raise ValueError("'content' is not text")
    stamp = obj.get("as_of") or obj.get("date")
    if not stamp:
        raise ValueError("missing 'as_of'")
    try:
        as_of = parse_published(str(stamp))
    except EvergreenError as exc:
        raise ValueError(str(exc)) from None
    core_keys = {"url", "title", "as_of", "content", "gone"}
    meta = {k: v for k, v in obj.items() if k not in core_keys}
    return PageRecord(
        url=canonical_url(url),
        title=str(obj.get("title") or url).strip(),
        as_of=as_of,
        content=_clean_text(content or ""),
        gone=gone,
        meta=meta,
    )


def _clean_text(text: str) -> str:
    return strip_bidi(text.replace("\r\n", "\n").replace("\x00", ""))


def read_jsonl(path: Path, skipped: list[str], skip_bad: bool) -> Iterator[PageRecord]:
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rb") as fh:
            for lineno, raw in enumerate(fh, start=1):
                where = f"{path.name} line {lineno}"
                if not raw.strip():
                    continue
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError:
                    _problem(skipped, skip_bad, where, "not valid UTF-8")
                    continue
                try:
                    obj = json.loads(text)
                except json.JSONDecodeError as exc:
                    _problem(skipped, skip_bad, where, f"not valid JSON ({exc.msg})")
                    continue
                try:
                    yield _record_from_obj(obj, where)
                except ValueError as exc:
                    _problem(skipped, skip_bad, where, str(exc))
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise EvergreenError(f"{path.name} is not a readable gzip file ({exc}).") from None


def html_to_text(html: str) -> tuple[str, str]:
    """Readable text and the <title> of an HTML document."""
    from bs4 import BeautifulSoup  # lazy: 70 ms import, only for an HTML document

    soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup(["script", "style", "noscript", "template"]):
        tag.decompose()
    lines = [ln.strip() for ln in soup.get_text("\n").splitlines()]
    return "\n".join(ln for ln in lines if ln), title


def read_folder(
    folder: Path, corpus: str, skipped: list[str], skip_bad: bool
) -> Iterator[PageRecord]:
    files = sorted(
        p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in FOLDER_SUFFIXES
    )
    if not files:
        raise EvergreenError(f"{folder} holds no .md, .txt or .html files to import.")
    for path in files:
        rel = path.relative_to(folder).as_posix()
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            _problem(skipped, skip_bad, rel, "not valid UTF-8")
            continue
        try:
            meta, body = split_front_matter(_clean_text(text))
        except ValueError as exc:
            _problem(skipped, skip_bad, rel, f"bad front matter ({str(exc).splitlines()[0]})")
            continue
        title = str(meta.get("title") or "").strip()
        if path.suffix.lower() in {".html", ".htm"}:
            body, html_title = html_to_text(body)
            title = title or html_title
        if not title:
            heading = re.search(r"^#{1,6}\s+(.+?)\s*#*\s*$", body, re.M)
            title = heading.group(1) if heading else path.stem.replace("-", " ").replace("_", " ")
        stamp = meta.get("as_of") or meta.get("date") or meta.get("updated")
        try:
            if stamp:
                as_of = parse_published(stamp if isinstance(stamp, datetime) else str(stamp))
            else:
                as_of = datetime.fromtimestamp(int(os.stat(path).st_mtime), UTC)
        except EvergreenError as exc:
            _problem(skipped, skip_bad, rel, str(exc))
            continue
        try:
            url = page_url(str(meta.get("url") or f"local://{corpus}/{rel}"))
        except ValueError as exc:
            _problem(skipped, skip_bad, rel, str(exc))
            continue
        extra = {
            k: v for k, v in meta.items() if k not in {"url", "title", "date", "as_of", "gone"}
        }
        extra["path"] = rel
        yield PageRecord(
            url=canonical_url(url),
            title=title,
            as_of=as_of,
            content=body.strip() + "\n" if body.strip() else "",
            gone=bool(meta.get("gone")),
            meta=extra,
        )
