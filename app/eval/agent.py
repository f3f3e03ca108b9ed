"""Layer 3: graded agent tasks. For each task an agent model answers from the fragments
the retrieval lane returns (citing them as [n]); a judge model grades the answer
against the expected one and checks every claim against the fragments it cites.

Both models are any OpenAI-compatible chat-completions endpoint (base URL, key, model
name). Nothing here invents a figure: without an endpoint the command refuses to run,
and an answer the judge did not grade is reported as ungraded, never as right or wrong.

Task file: JSONL, one {"question", "expected_answer", "scope"} per line, optional "id";
"scope" is a retrieval scope object ({"org_id", "repo_id", ...}) or an org id string.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
import msgspec
import psycopg

from app.access import act_as
from app.eval.jsonl import json_objects
from app.retrieve.service import Retriever
from app.wire.retrieve import DEFAULT_BUDGET_TOKENS, RetrieveRequest, RetrieveResponse

AGENT_SYSTEM = (
    "You answer questions for an engineer using only the numbered context fragments given. "
    "After every claim, cite the fragment(s) it comes from as [n]. If the fragments do not "
    "contain the answer, say that you do not know; never use outside knowledge."
)
JUDGE_SYSTEM = (
    "You grade an assistant's answer. Reply with one JSON object and nothing else: "
    '{"correct": true|false, "score": number between 0 and 1, '
    '"claims": [{"claim": "...", "citations": [n, ...], "supported": true|false}], "notes": "..."}. '
    "correct: the answer agrees with the expected answer (wording may differ). "
    "claims: every factual claim of the answer, each with the fragment numbers it cites; supported is true "
    "only when the cited fragments themselves state the claim (a claim without a citation is unsupported)."
)


class EndpointError(RuntimeError):
    """The model endpoint failed or answered something unusable."""


class TaskError(ValueError):
    """A task file that cannot be used; the message names the file and line."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    url: str
    model: str
    key: str | None = None
    timeout_s: float = 120.0

    @property
    def completions_url(self) -> str:
        base = self.url.rstrip("/")
        return base if base.endswith("/chat/completions") else f"{base}/chat/completions"

    def describe(self) -> dict:
        return {"url": self.url, "model": self.model}  # never the key


@dataclass(frozen=True, slots=True)
class Task:
    id: str
    question: str
    expected_answer: str
    scope: dict


def load_tasks(path: Path, default_org: str | None = None) -> list[Task]:
    tasks: list[Task] = []
    for number, row in json_objects(path, TaskError):
        where = f"{path}:{number}"
        question, expected = row.get("question"), row.get("expected_answer")
        if not isinstance(question, str) or not question.strip():
            raise TaskError(f'{where}: "question" must be a non-empty string')
        if not isinstance(expected, str) or not expected.strip():
            raise TaskError(f'{where}: "expected_answer" must be a non-empty string')
        scope = row.get("scope", default_org)
        if isinstance(scope, str):
            scope = {"org_id": scope}
        if not isinstance(scope, dict) or not scope.get("org_id"):
            raise TaskError(f'{where}: "scope" must name an org (an org id or {{"org_id": ...}}); or use --org')
        tasks.append(Task(str(row.get("id", number)), question, expected, scope))
    if not tasks:
        raise TaskError(f"{path}: no task")
    return tasks


def chat(client: httpx.Client, endpoint: Endpoint, system: str, user: str, seed: int, retries: int = 2) -> str:
    """One chat completion at temperature 0; the text of the first choice."""
    headers = {"authorization": f"Bearer {endpoint.key}"} if endpoint.key else {}
    body = {
        "model": endpoint.model,
        "temperature": 0,
        "seed": seed,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
    }
    last = ""
    for attempt in range(retries + 1):
        try:
            response = client.post(endpoint.completions_url, json=body, headers=headers, timeout=endpoint.timeout_s)
        except httpx.HTTPError as exc:
            last = f"{endpoint.completions_url}: {exc}"
        else:
            if response.status_code == 200:
                try:
                    return response.json()["choices"][0]["message"]["content"] or ""
                except (ValueError, KeyError, IndexError, TypeError) as exc:
                    raise EndpointError(f"{endpoint.completions_url}: not a chat-completions answer ({exc!r})") from exc
            last = f"{endpoint.completions_url}: HTTP {response.status_code} {response.text[:200]}"
            if response.status_code < 500 and response.status_code != 429:
                break
        if attempt < retries:
            time.sleep(1.0 + attempt)
    raise EndpointError(last)


def context_block(response: RetrieveResponse) -> str:
    if not response.fragments:
        return "(no fragment was retrieved)"
    return "\n\n".join(f"[{i}] {f.source}\n{f.text}" for i, f in enumerate(response.fragments, start=1))


def parse_judgement(text: str) -> dict | None:
    """The judge's JSON object (also when wrapped in prose or a code fence), or None."""
    start = text.find("{")
    while start != -1:
        depth = 0
        for end in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            if depth == 0:
                try:
                    value = json.loads(text[start : end + 1])
                except json.JSONDecodeError:
                    break
                if isinstance(value, dict) and isinstance(value.get("correct"), bool):
                    return value
                break
        start = text.find("{", start + 1)
    return None


_CITATION = re.compile(r"\[(\d+)\]")


def grade_task(
    conn: psycopg.Connection,
    client: httpx.Client,
    retriever: Retriever,
    task: Task,
    agent: Endpoint,
    judge: Endpoint,
    budget_tokens: int,
    seed: int,
    principal: str,
) -> dict:
    request = msgspec.convert(
        {"query": task.question, "scope": task.scope, "budget_tokens": budget_tokens}, RetrieveRequest
    )
    act_as(conn, request.scope.org_id, principal)
    response = retriever.retrieve(conn, request)
    conn.commit()
    context = context_block(response)
    answer = chat(client, agent, AGENT_SYSTEM, f"Context fragments:\n\n{context}\n\nQuestion: {task.question}", seed)
    verdict_text = chat(
        client,
        judge,
        JUDGE_SYSTEM,
        f"Question: {task.question}\n\nExpected answer: {task.expected_answer}\n\n"
        f"Context fragments:\n\n{context}\n\nAssistant's answer:\n{answer}",
        seed,
    )
    verdict = parse_judgement(verdict_text)
    record = {
        "id": task.id,
        "question": task.question,
        "expected_answer": task.expected_answer,
        "scope": task.scope,
        "trace_id": response.trace_id,
        "fragments": [{"n": i, "id": f.id, "source": f.source} for i, f in enumerate(response.fragments, 1)],
        "answer": answer,
        "cited": sorted({int(n) for n in _CITATION.findall(answer)}),
    }
    if verdict is None:
        return record | {"graded": False, "judge_raw": verdict_text[:2000]}
    claims = [c for c in verdict.get("claims") or [] if isinstance(c, dict)]
    unsupported = [c for c in claims if c.get("supported") is not True]
    score = verdict.get("score")
    return record | {
        "graded": True,
        "correct": verdict["correct"],
        "score": float(score) if isinstance(score, (int, float)) else float(verdict["correct"]),
        "claims": claims,
        "unsupported_claims": len(unsupported),
        "notes": verdict.get("notes", ""),
    }


def summarize(records: list[dict], spot_check: int, seed: int) -> dict:
    graded = [r for r in records if r.get("graded")]
    claims = sum(len(r["claims"]) for r in graded)
    unsupported = sum(r["unsupported_claims"] for r in graded)
    rng = random.Random(seed)
    return {
        "tasks": len(records),
        "graded": len(graded),
        "ungraded": len(records) - len(graded),
        "accuracy": round(sum(r["correct"] for r in graded) / len(graded), 4) if graded else None,
        "mean_score": round(sum(r["score"] for r in graded) / len(graded), 4) if graded else None,
        "claims": claims,
        "hallucination_rate": round(unsupported / claims, 4) if claims else None,
        "answers_with_unsupported_claims": sum(1 for r in graded if r["unsupported_claims"]),
        "spot_check": sorted(
            rng.sample([r["id"] for r in records], min(spot_check, len(records))),
            key=lambda i: [r["id"] for r in records].index(i),
        ),
    }


def run(
    conn: psycopg.Connection,
    retriever: Retriever,
    tasks: list[Task],
    agent: Endpoint,
    judge: Endpoint,
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
    seed: int = 7,
    spot_check: int = 5,
    principal: str = "admin",
    progress: Callable[[int, int], None] | None = None,
    client: httpx.Client | None = None,
) -> tuple[dict, list[dict]]:
    records: list[dict] = []
    with client or httpx.Client() as http:
        for done, task in enumerate(tasks, start=1):
            records.append(grade_task(conn, http, retriever, task, agent, judge, budget_tokens, seed, principal))
            if progress:
                progress(done, len(tasks))
    summary = summarize(records, spot_check, seed) | {
        "agent": agent.describe(),
        "judge": judge.describe(),
        "pipeline": retriever.pipeline_info(),
        "seed": seed,
    }
    return summary, records
