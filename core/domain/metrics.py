"""Continuity metrics between two versions of a report.

Follows "Incremental Open-Ended Deep Research": content ROUGE-L F1 and BLEU-4, and
outline ROUGE-L F1 and exact-match F1 on the top three heading levels.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass

import sacrebleu
from rapidfuzz.distance import LCSseq

from core.domain.citations import is_citation_text, rewrite_citations
from core.domain.html_comments import replace_html
from core.domain.links import MD_LINK, MD_REF_LINK

Heading = tuple[int, str]  # (level, heading text); level 1..6

__all__ = [
    "Continuity",
    "Heading",
    "bleu4",
    "continuity",
    "normalize_heading",
    "outline_em_f1",
    "outline_levels",
    "outline_rouge_l",
    "rouge_l_f1",
    "tokenize",
]

# --- tokenisation -----------------------------------------------------------------

_PARENS = r"\((?:[^()]|\([^()]*\))*\)"  # one level of nested parens (e.g. wiki urls)
# citations are read by core.domain.citations ([3], [1, 2], [1-3], [1–3]; a link whose text is
# one, [3](https://...), is a citation too); footnote references [^1], [^note] are other
# reports' markers
_FOOTNOTE = re.compile(r"\[\^[^\]\n]+\](?:" + _PARENS + r")?")
_LINK_DEF = re.compile(r"^[ \t]{0,3}\[[^\]\n]+\]:[ \t]*\S+", re.MULTILINE)
_AUTOLINK = re.compile(r"<(?:https?|ftp|mailto):[^>\s]*>", re.IGNORECASE)
_BARE_URL = re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.\S+", re.IGNORECASE)
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_WORD = re.compile(r"[^\W_]+")  # unicode letters/digits; '_' is emphasis noise


def _link_text(link: re.Match[str]) -> str:
    text = link.group("text")
    return " " if is_citation_text(text) else f" {text} "


def tokenize(text: str) -> list[str]:
    """Lowercase word tokens of Markdown text, without syntax, URLs or citation markers."""
    text = replace_html(text, " ")
    text = _LINK_DEF.sub(" ", text)  # first: a defined [1] is a link, undefined a citation
    text = rewrite_citations(text, lambda _c: " ")
    text = _FOOTNOTE.sub(" ", text)
    text = MD_LINK.sub(_link_text, text)
    text = MD_REF_LINK.sub(r" \1 ", text)
    text = _AUTOLINK.sub(" ", text)
    text = _BARE_URL.sub(" ", text)
    text = _HTML_TAG.sub(" ", text)
    return _WORD.findall(text.casefold())


# --- content metrics --------------------------------------------------------------


def _lcs_f1(reference: Sequence[Hashable], candidate: Sequence[Hashable]) -> float:
    """ROUGE-L F1 (beta=1) of two token sequences."""
    if not reference and not candidate:
        return 1.0
    if not reference or not candidate:
        return 0.0
    vocab: dict[Hashable, int] = {}
    ref_ids = [vocab.setdefault(t, len(vocab)) for t in reference]
    cand_ids = [vocab.setdefault(t, len(vocab)) for t in candidate]
    lcs = LCSseq.similarity(ref_ids, cand_ids)
    if lcs == 0:
        return 0.0
    precision = lcs / len(cand_ids)
    recall = lcs / len(ref_ids)
    return 2 * precision * recall / (precision + recall)


def rouge_l_f1(reference: str, candidate: str) -> float:
    """ROUGE-L F1 of candidate against reference on tokenize() tokens."""
    return _lcs_f1(tokenize(reference), tokenize(candidate))


def bleu4(reference: str, candidate: str) -> float:
    """Sentence BLEU-4 (sacrebleu, exp smoothing) in [0, 1] on tokenize() tokens."""
    ref_tokens = tokenize(reference)
    cand_tokens = tokenize(candidate)
    if ref_tokens == cand_tokens:
        return 1.0  # also covers both empty
    if not ref_tokens or not cand_tokens:
        return 0.0
    score = sacrebleu.sentence_bleu(
        " ".join(cand_tokens), [" ".join(ref_tokens)], tokenize="none"
    ).score
    return min(1.0, max(0.0, score / 100.0))


# --- outline metrics --------------------------------------------------------------


def outline_levels(headings: list[Heading], depth: int = 3) -> list[Heading]:
    """Headings within the top `depth` levels present, in order."""
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    if not headings:
        return []
    top = min(level for level, _ in headings)
    return [(level, text) for level, text in headings if level < top + depth]


_NUMBERING = re.compile(
    r"^\s*(?:"
    r"\(?\d{1,3}(?:\.\d{1,3})*[.):]"  # 1.  2.1)  (3)  4:
    r"|\(?(?:[ivxlc]{1,4}|[a-z])[.)]"  # iv.  (a)  b)
    r"|\d{1,3}(?:\.\d{1,3})+"  # 2.1
    r"|\d{1,2}"  # 3
    r")\s+"
)
_PUNCT = re.compile(r"[^\w\s]|_")
_SPACES = re.compile(r"\s+")


def normalize_heading(text: str) -> str:
    """Casefold, drop leading numbering ("2.1 ", "1. ", "iv) ") and punctuation, squash spaces."""
    text = text.casefold().strip().lstrip("#").strip()
    text = _NUMBERING.sub("", text, count=1)
    text = _PUNCT.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


def outline_rouge_l(reference: list[Heading], candidate: list[Heading], depth: int = 3) -> float:
    """ROUGE-L F1 over normalized heading texts of the top `depth` levels (one per token)."""
    ref = [normalize_heading(t) for _, t in outline_levels(reference, depth)]
    cand = [normalize_heading(t) for _, t in outline_levels(candidate, depth)]
    return _lcs_f1(ref, cand)


def _relative_pairs(headings: list[Heading], depth: int) -> Counter[tuple[int, str]]:
    kept = outline_levels(headings, depth)
    if not kept:
        return Counter()
    top = min(level for level, _ in kept)
    return Counter((level - top, normalize_heading(text)) for level, text in kept)


def outline_em_f1(reference: list[Heading], candidate: list[Heading], depth: int = 3) -> float:
    """Exact-match F1 over (relative level, normalized text) multisets of the top `depth` levels."""
    ref = _relative_pairs(reference, depth)
    cand = _relative_pairs(candidate, depth)
    n_ref, n_cand = ref.total(), cand.total()
    if n_ref == 0 and n_cand == 0:
        return 1.0
    if n_ref == 0 or n_cand == 0:
        return 0.0
    matches = (ref & cand).total()
    if matches == 0:
        return 0.0
    precision = matches / n_cand
    recall = matches / n_ref
    return 2 * precision * recall / (precision + recall)


# --- bundle -----------------------------------------------------------------------


@dataclass(frozen=True)
class Continuity:
    """Continuity of a candidate report version against a reference version."""

    content_rouge_l: float
    content_bleu4: float
    outline_rouge_l: float
    outline_em_f1: float

    def as_dict(self) -> dict[str, float]:
        """Field name -> value rounded to 4 decimals."""
        return {k: round(v, 4) for k, v in asdict(self).items()}


def continuity(
    ref_text: str,
    cand_text: str,
    ref_outline: list[Heading],
    cand_outline: list[Heading],
) -> Continuity:
    """All four continuity metrics of cand against ref."""
    return Continuity(
        content_rouge_l=rouge_l_f1(ref_text, cand_text),
        content_bleu4=bleu4(ref_text, cand_text),
        outline_rouge_l=outline_rouge_l(ref_outline, cand_outline),
        outline_em_f1=outline_em_f1(ref_outline, cand_outline),
    )
