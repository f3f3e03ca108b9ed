"""Transcripts ingested as kind conversation: one fragment per turn, stored as the eval
lane stores a turn (ADR 0027), pointing at the turn's lines; anything else is refused."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner

from app.cli import main
from app.ingest import conversation
from app.ingest.chunk_conversation import ConversationChunker
from app.ingest.chunk_prose import ProseChunker
from app.ingest.normalize import RejectedDocument, SourceDocument

TRANSCRIPT = (Path(__file__).parents[1] / "fixtures" / "conversation" / "transcript.md").read_text()
S1 = "Session 1, 1:56 pm on 8 May, 2023"
S2 = "Session 2, 2023-06-10"
MALFORMED = "## Session 1, 8 May 2023\n\nCaroline: Hi!\n\nthe minutes of the meeting follow\n"


def fragments(conn) -> list[tuple[str, list[str], str, int, int]]:
    return conn.execute(
        "select f.text, f.heading_path, s.anchor, s.start_line, s.end_line from data.fragment_sources s"
        " join data.fragments f using (fragment_id) where s.retired_at is null order by s.start_line"
    ).fetchall()


def test_a_transcript_is_one_fragment_per_turn_as_the_eval_lane_stores_it(conn, ingest):
    ingest("acme", {"chats/mel.md": TRANSCRIPT}, kind="conversation")
    rows = fragments(conn)
    assert [(heading, anchor, start, end) for _text, heading, anchor, start, end in rows] == [
        ([S1], "L5-L5", 5, 5),
        ([S1], "L6-L6", 6, 6),
        ([S1], "L7-L8", 7, 8),
        ([S2], "L12-L12", 12, 12),
        ([S2], "L13-L13", 13, 13),
    ]
    texts = [text for text, *_ in rows]
    assert texts[0] == f"{S1}\nCaroline: Hey Mel! I went to a support group yesterday.\n(7 May 2023)"
    assert texts[2] == (
        f"{S1}\nCaroline: They were stoked for the dinosaur exhibit!\nIt was a blast.\n\n"
        "What did the kids like at the museum?"
    )
    assert texts[3] == f"{S2}\nMelanie: I painted a sunrise at the lake last year. How are you?\n(2022)"
    assert texts[4] == f"{S2}\nCaroline: Fine, thanks.\n\nHow are you?"
    # The same functions as the eval lane: its rows (id, session title, "Speaker: text").
    lane = conversation.fragments(
        conversation.turns_of(
            [
                ("a", S1, "Caroline: Hey Mel! I went to a support group yesterday."),
                ("b", S1, "Melanie: That's great. What did the kids like at the museum?"),
                ("c", S1, "Caroline: They were stoked for the dinosaur exhibit!\nIt was a blast."),
            ]
        )
    )
    assert texts[:3] == list(lane.values())
    lines = TRANSCRIPT.split("\n")
    assert lines[7 - 1].startswith("Caroline: They were stoked")


def search(conn, as_principal, query: str) -> list[str]:
    as_principal("acme")
    rows = conn.execute(
        "select f.text from api.search_lexical('acme', %s, 10) s join data.fragments f using (fragment_id)"
        " order by s.rank",
        (query,),
    ).fetchall()
    conn.rollback()
    return [text for (text,) in rows]


def test_the_answer_turn_is_found_by_its_question_and_a_relative_year_by_its_year(conn, ingest, as_principal):
    ingest("acme", {"chats/mel.md": TRANSCRIPT}, kind="conversation")
    assert "kids" not in TRANSCRIPT.split("\n")[6]  # the answer's own line does not say it
    found = search(conn, as_principal, "What did the kids like?")
    answer = f"{S1}\nCaroline: They were stoked for the dinosaur exhibit!"
    assert any(text.startswith(answer) for text in found), found
    assert "2022" not in TRANSCRIPT
    in_2022 = search(conn, as_principal, "2022")
    assert [text.split("\n")[1] for text in in_2022] == [
        "Melanie: I painted a sunrise at the lake last year. How are you?"
    ]


def test_front_matter_kind_makes_a_transcript_and_other_kinds_are_chunked_as_before(conn, ingest, settings):
    ingest("acme", {"chats/mel.md": f"---\nkind: conversation\n---\n{TRANSCRIPT}"})
    assert [r[2] for r in fragments(conn)] == ["L8-L8", "L9-L9", "L10-L11", "L15-L15", "L16-L16"]
    conn.execute("delete from data.fragment_sources; delete from data.fragments")
    ingest("acme", {"notes/mel.md": TRANSCRIPT}, repo="notes")
    prose = fragments(conn)
    chunks = ProseChunker(settings.max_fragment_tokens, settings.overlap_tokens).chunk(TRANSCRIPT, "markdown")
    assert [(text, anchor) for text, _heading, anchor, _start, _end in prose] == [(c.text, c.anchor) for c in chunks]
    assert not any("(7 May 2023)" in text for text, *_ in prose)


@pytest.mark.parametrize(
    "text, message",
    [
        (MALFORMED, "line 5: 'the minutes of the meeting follow' is not a turn 'Speaker: text'"),
        ("Caroline: Hi!\nMelanie: Hello!\n", "line 1: a turn before any session heading or date"),
        ("[yesterday] Caroline: Hi!\n", "line 1: [yesterday] holds no date"),
        ("# Just a title\n\n", "no turns found"),
    ],
)
def test_what_is_not_a_transcript_is_refused_saying_which_line(pipeline, text, message):
    with pytest.raises(RejectedDocument, match=r"chat\.md: not a conversation transcript: ") as refused:
        pipeline.prepare(SourceDocument(path="chat.md", content=text, kind="conversation"))
    assert message in str(refused.value)
    assert "Speaker: text" in str(refused.value)


def test_http_refuses_a_malformed_transcript_and_stores_nothing(client, db_url):
    body = {
        "scope": {"org_id": "acme"},
        "documents": [{"path": "chat.md", "content": MALFORMED, "kind": "conversation"}],
    }
    response = client.post("/documents", json=body)
    assert response.status_code == 422, response.text
    assert "line 5" in response.text and "Speaker: text" in response.text
    with psycopg.connect(db_url) as conn:
        assert conn.execute("select count(*) from data.documents").fetchone() == (0,)
    body["documents"][0]["content"] = TRANSCRIPT
    assert client.post("/documents", json=body).status_code == 201
    with psycopg.connect(db_url) as conn:
        assert [r[2] for r in fragments(conn)] == ["L5-L5", "L6-L6", "L7-L8", "L12-L12", "L13-L13"]


def test_cli_ingest_kind_conversation(db_url, tmp_path):
    (tmp_path / "bad.md").write_text(MALFORMED)
    (tmp_path / "mel.md").write_text(TRANSCRIPT)
    runner = CliRunner()
    args = ["--db-url", db_url, "ingest", "--org", "acme", "--kind", "conversation"]
    bad = runner.invoke(main, [*args, str(tmp_path / "bad.md")], catch_exceptions=False)
    assert bad.exit_code != 0 and "line 5" in bad.output and "Speaker: text" in bad.output, bad.output
    with psycopg.connect(db_url) as conn:
        assert conn.execute("select count(*) from data.documents").fetchone() == (0,)
    good = runner.invoke(main, [*args, str(tmp_path / "mel.md")], catch_exceptions=False)
    assert good.exit_code == 0, good.output
    with psycopg.connect(db_url) as conn:
        assert [r[2] for r in fragments(conn)] == ["L5-L5", "L6-L6", "L7-L8", "L12-L12", "L13-L13"]


def test_dated_lines_make_day_sessions_and_a_long_turn_is_cut_citing_it():
    text = (
        "[2023-05-08 13:56] Caroline: Where did you go last week?\n"
        "[8 May 2023, 2:01 pm] Melanie: To the lake. " + "We swam and talked for hours. " * 200 + "\n"
        "[2023-05-09 08:00] Caroline: I slept well last night.\n"
    )
    chunks = ConversationChunker(200, 20).chunk(text)
    assert {c.anchor for c in chunks} == {"L1-L1", "L2-L2", "L3-L3"}
    assert [c.heading_path for c in chunks if c.anchor != "L2-L2"] == [("8 May 2023",), ("9 May 2023",)]
    assert chunks[0].text == "8 May 2023\nCaroline: Where did you go last week?\n(week of 1 May 2023)"
    long = [c for c in chunks if c.anchor == "L2-L2"]
    assert len(long) > 1 and all(c.token_count <= 200 and (c.start_line, c.end_line) == (2, 2) for c in long)
    assert long[0].text.startswith("8 May 2023\nMelanie: To the lake.")
    assert long[-1].text.endswith("Where did you go last week?")


PUPPY = "## Session 1, 8 May 2023\n\nCaroline: We adopted a puppy last week, he chews everything!\nMelanie: Congrats!\n"


def test_a_turn_is_found_by_a_word_it_implies_and_prose_is_not_expanded(conn, ingest, as_principal):
    """Conversation turns carry learned expansion terms in their lexical text only
    (app/text/expansion.py): "dog" finds the puppy turn; the same words as prose do not
    get them, and no reader sees them."""
    ingest("acme", {"chats/pets.md": PUPPY}, kind="conversation")
    ingest("acme", {"notes/pets.md": PUPPY.replace("## Session 1, 8 May 2023\n\n", "")}, repo="notes")
    found = search(conn, as_principal, "dog")
    assert [text.split("\n")[1] for text in found] == ["Caroline: We adopted a puppy last week, he chews everything!"]
    assert "dog" not in found[0]
    stored = conn.execute("select count(*) from data.fragments where text like '%dog%'").fetchone()
    assert stored == (0,)
