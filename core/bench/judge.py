"""The bench's judge: RACE-style scores of one report against another, asked of the LLM
writer's model (the loopback fake model in tests)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from core.writers.llm import LlmWriter


class RaceScores(BaseModel):
    comprehensiveness: float = Field(ge=0, le=10)
    insight: float = Field(ge=0, le=10)
    instruction_following: float = Field(ge=0, le=10)
    readability: float = Field(ge=0, le=10)


class RaceJudgement(BaseModel):
    report_a: RaceScores
    report_b: RaceScores
    rationale: str = ""


RACE_DIMENSIONS = tuple(RaceScores.model_fields)
JUDGE_REPORT_CHARS = 24_000  # each report is cut to this before judging


def judge_report(writer: LlmWriter, question: str, target: str, reference: str) -> dict[str, float]:
    """RACE-style scores of ``target`` against ``reference`` (both Markdown): per
    dimension target / (target + reference), 0.5 meaning as good, and their mean."""

    def check(out: RaceJudgement) -> dict[str, float]:
        scores = {}
        for dim in RACE_DIMENSIONS:
            a, b = getattr(out.report_a, dim), getattr(out.report_b, dim)
            scores[dim] = round(a / (a + b), 4) if a + b else 0.5
        scores["overall"] = round(sum(scores.values()) / len(RACE_DIMENSIONS), 4)
        return scores

    return writer.ask(
        "judge_report",
        "writer",
        RaceJudgement,
        check,
        question=question,
        report_a=target[:JUDGE_REPORT_CHARS],
        report_b=reference[:JUDGE_REPORT_CHARS],
    )
