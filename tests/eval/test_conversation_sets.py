"""A labelled set whose corpus is a conversation's turns (LoCoMo's layout: one turn a
document, titled with its session's date) is ingested as a conversation: each turn with
its date, the dates its relative times name, and the question asked before it."""

from __future__ import annotations

import hashlib
import json

from app.eval import beir, golden
from tests.eval.test_golden import write_set

S1 = "session 1, 1:56 pm on 8 May, 2023"
S2 = "session 2, 8:56 pm on 20 July, 2023"
TURNS = [
    ("D1:1", S1, "Melanie: Hey Caroline! Good to see you. What do your kids like these days?"),
    ("D1:2", S1, "Caroline: They loved the dinosaur bones at the museum."),
    ("D1:3", S1, "Melanie: Ha, I can picture it. My kids keep me busy too, honestly."),
    ("D1:4", S1, "Caroline: Kids are great. I started a new painting of a lake."),
    ("D2:1", S2, "Caroline: Hey Mel! How was your summer so far?"),
    ("D2:2", S2, "Melanie: Lovely. We went camping at the lake, like we did last year."),
    ("D2:3", S2, "Caroline: Camping at a lake sounds perfect for the kids."),
    ("D2:4", S2, "Melanie: It was! Caroline, your painting of the lake is beautiful."),
]
QUERIES = [
    {"_id": "q1", "text": "What do Caroline's kids like?"},
    {"_id": "q2", "text": "Where did Melanie go in 2022?"},
]
QRELS = "query-id\tcorpus-id\tscore\nq1\tD1:2\t1\nq2\tD2:2\t1\n"


def test_a_conversation_is_stored_turn_by_turn_with_date_and_question(conn, pipeline, retriever, tmp_path):
    corpus = [{"_id": i, "title": t, "text": x} for i, t, x in TURNS]
    dataset = beir.load(write_set(tmp_path / "chat", corpus=corpus, queries=QUERIES, qrels=QRELS))
    assert beir.detect_kind(dataset) == "conversation"
    docs = {d.id: d for d in dataset.corpus()}
    assert beir.document_path("D1:2", "conversation") == "D1%3A2.txt"
    assert beir.corpus_id("D1%3A2.txt", "conversation") == "D1:2"
    assert beir.document_text(docs["D1:2"], "conversation") == (
        f"{S1}\nCaroline: They loved the dinosaur bones at the museum.\n\nWhat do your kids like these days?"
    )
    assert "(2022)" in beir.document_text(docs["D2:2"], "conversation")
    # Asked for prose, the same set is stored as before: title and turn.
    plain = beir.document_text(docs["D1:2"], "prose")
    assert plain == f"{S1}\n\nCaroline: They loved the dinosaur bones at the museum."

    report = golden.run(
        conn,
        pipeline,
        retriever,
        dataset,
        golden.GoldenOptions(stages=("lexical",), depth=100, out_dir=tmp_path / "out"),
    )
    assert report["kind"] == "conversation" and report["ingested_now"] == len(TURNS)
    ranks = {
        row["query_id"]: row["stages"]["lexical"]["top10"]
        for row in map(json.loads, (tmp_path / "out" / "chat-test.jsonl").read_text().splitlines())
    }
    # The answer turn holds none of the question's words but the question it answers.
    assert ranks["q1"].index("D1:2") <= 1, ranks["q1"]
    # "last year", said in July 2023, is found by the year it names.
    assert ranks["q2"][0] == "D2:2", ranks["q2"]


def test_the_stored_copy_follows_the_way_turns_are_stored(tmp_path, monkeypatch):
    """A change to what a turn's fragment holds is a new copy (its org), never the old one reused."""
    corpus = [{"_id": i, "title": t, "text": x} for i, t, x in TURNS]
    dataset = beir.load(write_set(tmp_path / "chat", corpus=corpus, queries=QUERIES, qrels=QRELS))
    before = dataset.content_hash()
    monkeypatch.setattr("app.ingest.conversation.VERSION", "changed")
    assert beir.load(tmp_path / "chat").content_hash() != before
    prose = beir.load(write_set(tmp_path / "geo"))
    plain = prose.content_hash()
    assert plain == hashlib.sha256((tmp_path / "geo" / "corpus.jsonl").read_bytes()).hexdigest()
