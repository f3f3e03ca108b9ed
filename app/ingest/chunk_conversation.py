"""Transcripts (documents of kind conversation): one fragment per turn.

Each turn's fragment is the text app/ingest/conversation.py builds for it, as the eval
lane stores a LoCoMo turn (ADR 0027): its session's label with the date, "Speaker: text",
the dates its relative times name, the questions of the turn before it. The heading path
names the session, and the anchor and line numbers point at the turn's lines in the
transcript, so a citation opens the turn as written. A turn whose fragment is over the
size bound is cut like prose (`Lines.pieces`), every piece pointing at the same turn.
"""

from __future__ import annotations

from app.ingest import conversation
from app.ingest.chunks import Chunk, Lines
from app.ingest.normalize import front_matter_lines
from app.text.tokens import count_tokens


class ConversationChunker:
    """Chunks transcripts; it keeps only its settings, so one instance serves every thread."""

    def __init__(self, max_tokens: int, overlap_tokens: int) -> None:
        self.max_tokens = max_tokens
        self.overlap_tokens = overlap_tokens

    def read(self, text: str) -> list[conversation.TranscriptTurn]:
        """The transcript's turns (a leading front matter block is metadata); raises
        conversation.NotATranscript when the text is not one."""
        return conversation.read_transcript(text, skip_lines=front_matter_lines(text))

    def chunk(self, text: str) -> list[Chunk]:
        said = self.read(text)
        turns = [t.turn for t in said]
        chunks: list[Chunk] = []
        for index, item in enumerate(said):
            fragment = conversation.turn_fragment(turns, index)
            tokens = count_tokens(fragment)
            if tokens <= self.max_tokens:
                parts = [(fragment, tokens)]
            else:
                lines = Lines(fragment, self.max_tokens, self.overlap_tokens)
                parts = [(p.text, p.token_count) for p in lines.pieces(0, len(lines))]
            chunks.extend(
                Chunk(
                    text=part,
                    heading_path=(item.turn.session,),
                    symbol=None,
                    start_line=item.start_line,
                    end_line=item.end_line,
                    anchor=item.turn.id,
                    token_count=count,
                )
                for part, count in parts
            )
        return chunks
