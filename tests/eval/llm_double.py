"""TEST DOUBLE of an OpenAI-compatible chat-completions endpoint, for plumbing tests
only; it is not a model and its figures mean nothing.

It plays both roles from the request's system prompt:
- agent: answers with the first line of fragment [1]'s text, cited as [1], plus one
  uncited sentence (a claim the judge must flag as unsupported);
- judge: "correct" when the expected answer's words all occur in the answer; one claim
  per sentence, supported when it cites a fragment whose text contains its words.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def _fragments(user: str) -> dict[int, str]:
    parts = re.split(r"^\[(\d+)\] [^\n]*\n", user, flags=re.MULTILINE)
    return {int(parts[i]): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def agent_answer(user: str) -> str:
    fragments = _fragments(user.split("\n\nQuestion:")[0])
    if not fragments:
        return "I do not know."
    first = next(line for line in fragments[1].splitlines() if line.strip() and not line.startswith("#"))
    return f"{first.strip().rstrip('.')} [1]. Also, the moon is made of cheese."


def judge_verdict(user: str) -> dict:
    expected = user.split("Expected answer: ", 1)[1].split("\n", 1)[0]
    context, answer = user.split("Assistant's answer:\n", 1)
    fragments = _fragments(context.split("Context fragments:\n\n", 1)[1])
    claims = []
    for sentence in (s.strip() for s in re.split(r"(?<=[.!?])\s+", answer) if s.strip()):
        cited = [int(n) for n in re.findall(r"\[(\d+)\]", sentence)]
        claim_words = _words(re.sub(r"\[\d+\]", "", sentence))
        supported = bool(cited) and all(claim_words <= _words(fragments.get(n, "")) for n in cited)
        claims.append({"claim": sentence, "citations": cited, "supported": supported})
    correct = _words(expected) <= _words(answer)
    return {"correct": correct, "score": 1.0 if correct else 0.0, "claims": claims, "notes": "test double"}


class LLMDouble:
    """Serves on 127.0.0.1 (ephemeral port) in a thread; records every request."""

    def __init__(self, judge_reply: str | None = None, status: int = 200) -> None:
        self.requests: list[dict] = []
        self.judge_reply = judge_reply
        self.status = status
        double = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                double.requests.append({"path": self.path, "auth": self.headers.get("authorization"), "body": body})
                if double.status != 200:
                    self.send_response(double.status)
                    self.end_headers()
                    self.wfile.write(b'{"error": "test double refuses"}')
                    return
                system, user = body["messages"][0]["content"], body["messages"][1]["content"]
                if system.startswith("You grade"):
                    content = double.judge_reply if double.judge_reply is not None else json.dumps(judge_verdict(user))
                else:
                    content = agent_answer(user)
                payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> LLMDouble:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
