"""Reading one crawled page: crawl4ai's result for a URL becomes a FetchedPage, or the
error that says why it cannot be used.

HTML and text pages become Markdown / text, PDFs become text (pypdf), anything else is
refused; a page bigger than ``max_bytes`` is refused, and so is a page whose text is
garbled (binary served as HTML). 404 and 410 mean the page is gone (PageNotFound); a
redirect's target must pass the URL policy too.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from core.dates import http_date, utcnow
from core.domain.validation import strip_controls
from core.errors import EvergreenError
from core.sources.base import FetchedPage, PageNotFound, Validators, canonical_url
from core.sources.corpus_files import html_to_text
from core.sources.urlpolicy import UrlPolicy, UrlRefused

HTML_TYPES = ("text/html", "application/xhtml+xml")
TEXT_TYPES = ("text/plain", "text/markdown", "text/x-markdown", "text/csv")
PDF_TYPES = ("application/pdf", "application/x-pdf")
GONE = (404, 410)
_STATUS_IN_ERROR = re.compile(r"\bHTTP (\d{3})\b")
_TOO_BIG = re.compile(r"over the byte limit: (\d+)")
_REFUSED = re.compile(r"Refused to fetch [^\n]*")


async def read_page(
    url: str,
    result: Any,
    via: str,
    note: str,
    *,
    policy: UrlPolicy,
    timeout: float,
    max_bytes: int,
    max_chars: int,
) -> FetchedPage | None:
    """The page crawl4ai's ``result`` holds for ``url`` (fetched ``via`` chromium or http;
    ``note`` ends an HTTP error's message). None for a PDF the browser could not read
    (download it instead)."""
    status = _usable_status(url, result, note, timeout, max_bytes)
    final = canonical_url(result.redirected_url or url)
    if final != url:
        await asyncio.to_thread(policy.check, final)
    ctype, headers, declared = _response_type(result, status)
    files = list(result.downloaded_files or [])
    if ctype in PDF_TYPES or any(str(f).lower().endswith(".pdf") for f in files):
        if not files:
            return None if via != "http" else _refuse_empty_pdf(url)
        data = _read_and_remove(files)
        _check_size(url, max(declared, len(data)), max_bytes)
        title, content = pdf_to_text(data, url)
        return _finish(url, final, title, content, via, status, ctype, headers, max_chars)
    for f in files:  # any other download is not wanted
        with contextlib.suppress(OSError):
            os.remove(f)
    title, text = _readable_text(url, result, via, ctype, declared, max_bytes)
    return _finish(url, final, title, text, via, status, ctype or "text/html", headers, max_chars)


def _usable_status(url: str, result: Any, note: str, timeout: float, max_bytes: int) -> int:
    """The page's HTTP status, once it is one whose body can be read; else the error that
    says why not (gone, too big, refused, no answer, an HTTP error)."""
    status = status_of(result)
    error = str(result.error_message or "")
    if status in GONE:
        raise PageNotFound(f"{url} is gone (HTTP {status}).")
    big = _TOO_BIG.search(error)
    if big:
        _check_size(url, int(big.group(1)), max_bytes)
    refused = _REFUSED.search(error)
    if status is None and refused:  # a redirect hop the policy refused (HTTP mode)
        raise UrlRefused(refused.group(0))
    if status is None:
        raise EvergreenError(f"Cannot fetch {url}: {_short_error(error, timeout)}")
    if status >= 400:
        raise EvergreenError(f"Cannot fetch {url}: HTTP {status}{note}.")
    return status


def _response_type(result: Any, status: int) -> tuple[str, dict[str, str], int]:
    """The response's content type, its headers (lower-case names) and the length it
    declares (0 if none)."""
    headers = {str(k).lower(): str(v) for k, v in (result.response_headers or {}).items()}
    ctype = headers.get("content-type", "").split(";")[0].strip().lower()
    if 300 <= status < 400:  # the browser followed a redirect; headers are the hop's
        ctype, headers = "", {}
    declared = (
        int(headers.get("content-length") or 0)
        if headers.get("content-length", "").isdigit()
        else 0
    )
    return ctype, headers, declared


def _readable_text(
    url: str, result: Any, via: str, ctype: str, declared: int, max_bytes: int
) -> tuple[str, str]:
    """(title, text) of an HTML or text page; refused if of another type, too big, empty
    or garbled."""
    if ctype and ctype not in HTML_TYPES and not ctype.startswith("text/"):
        raise EvergreenError(
            f"Cannot use {url}: its content type {ctype} is neither HTML, text nor PDF."
        )
    html = result.html or ""
    _check_size(url, max(declared, len(html.encode("utf-8", "ignore"))), max_bytes)
    if ctype in TEXT_TYPES or (ctype.startswith("text/") and ctype not in HTML_TYPES):
        text = html if via == "http" else _html_text(html)
        title = ""
    else:
        markdown = result.markdown
        text = getattr(markdown, "raw_markdown", None) or str(markdown or "")
        title = str((result.metadata or {}).get("title") or "")
    if not text.strip():
        raise EvergreenError(f"Cannot use {url}: the page has no readable text.")
    if text.lstrip().startswith("Crawl4AI Error:") or _garbled(text):  # not the page's
        raise EvergreenError(
            f"Cannot use {url}: its text is garbled (binary data or a broken encoding)."
        )
    return title, text


def _finish(
    url: str,
    final: str,
    title: str,
    content: str,
    via: str,
    status: int,
    ctype: str,
    headers: dict[str, str],
    max_chars: int,
) -> FetchedPage:
    content = content.replace("\r\n", "\n").replace("\x00", "").strip() + "\n"
    meta: dict[str, object] = {"via": via, "status": status, "content_type": ctype}
    if final != url:
        meta["final_url"] = final
    if len(content) > max_chars:
        content = content[:max_chars]
        meta["truncated"] = True
    if not title:
        heading = re.search(r"^#{1,6}\s+(.+?)\s*#*\s*$", content, re.M)
        title = heading.group(1) if heading else url
    return FetchedPage(
        url=url,
        title=strip_controls(title)[:300],
        content=content,
        fetched_at=utcnow(),
        published=_last_modified(headers),
        meta=meta,
        validators=Validators(headers.get("etag"), headers.get("last-modified")) or None,
    )


def _check_size(url: str, size: int, max_bytes: int) -> None:
    if size > max_bytes:
        raise EvergreenError(
            f"Cannot use {url}: {size:,} bytes is over the {max_bytes:,}-byte limit "
            "(EVERGREEN_FETCH_MAX_BYTES)."
        )


def _refuse_empty_pdf(url: str) -> FetchedPage:
    raise EvergreenError(f"Cannot use {url}: the PDF came back empty.")


def pdf_to_text(data: bytes, url: str) -> tuple[str, str]:
    """(title, text) of a PDF, with pypdf."""
    try:
        import pypdf  # lazy: 90 ms to import, needed only for a PDF
    except ImportError:
        raise EvergreenError(f"Cannot use {url}: reading PDFs needs pypdf.") from None
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        pages = [page.extract_text() or "" for page in reader.pages[:300]]
        title = str((reader.metadata or {}).get("/Title") or "")
    except Exception as exc:
        raise EvergreenError(f"Cannot use {url}: unreadable PDF ({exc}).") from None
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    if not text:
        raise EvergreenError(f"Cannot use {url}: the PDF has no extractable text.")
    return title, text


def _read_and_remove(files: list[str]) -> bytes:
    data = b""
    for f in files:
        with contextlib.suppress(OSError):
            data = data or Path(f).read_bytes()
            os.remove(f)
    return data


def _html_text(html: str) -> str:
    return html_to_text(html)[0]


def _last_modified(headers: dict[str, str]) -> datetime | None:
    return http_date(headers.get("last-modified"))


def status_of(result: Any) -> int | None:
    if result.status_code is not None:
        return int(result.status_code)
    m = _STATUS_IN_ERROR.search(str(result.error_message or ""))
    return int(m.group(1)) if m else None


_UNREADABLE = re.compile(r"[\ufffd\x00-\x08\x0e-\x1f\x7f-\x9f\ue000-\uf8ff]")


def _garbled(text: str) -> bool:
    """Mostly replacement, control or private-use characters: binary served as text."""
    sample = text[:20000]
    return len(_UNREADABLE.findall(sample)) > max(20, len(sample) // 20)


def _short_error(error: str, timeout: float | None = None) -> str:
    """One line from crawl4ai's error text (which appends a code listing): what failed."""
    head = error.split("Code context:")[0]
    if "TOO_MANY_REDIRECTS" in head or "HTTP client error: 0, message=''" in head:
        return "too many redirects (a redirect loop)"
    if re.search(r"timed out|Timeout \d+ms exceeded|TimeoutError", head, re.I):
        return f"no answer within {timeout:g} s (timed out)" if timeout else "timed out"
    m = re.search(r"net::(ERR_[A-Z_]+)", head)
    if m:
        return m.group(1)
    lines = [ln.strip() for ln in head.splitlines() if ln.strip()]
    text = next((ln for ln in lines if ln.startswith("Error:")), lines[-1] if lines else "")
    text = re.sub(r"^.*?Error:\s*", "", text)
    text = re.sub(r"\s*\(\S+\.py\)", "", text)
    return " ".join(text.split())[:200] or "the request failed"
