"""Near-twin fragments (sync and async copies, generated code) take one place at the
head of a list: the lower twin's final score is scaled, the trace names the twin."""

from __future__ import annotations

import pytest

from app.retrieve import twins
from app.retrieve.twins import mark_twins, words
from tests.retrieve.test_compose import candidate

SYNC = '''    @checked
    def delete_document(self, doc_id: int) -> types.DocumentDeleted:
        """Delete a document and every fragment only it holds."""
        return self._call(self._calls.delete_document(doc_id))'''
ASYNC = '''    @checked
    async def delete_document(self, doc_id: int) -> types.DocumentDeleted:
        """Delete a document and every fragment only it holds."""
        return await self._call(self._calls.delete_document(doc_id))'''
POOL = (
    "class ConnectionPool:\n    def handle_request(self, request):\n        with self._lock:\n"
    "            return self._pool.handle(request, timeout=self._timeout)"
)
ASYNC_POOL = (
    POOL.replace("class ConnectionPool", "class AsyncConnectionPool")
    .replace("def handle_request", "async def handle_request")
    .replace("return self", "return await self")
)
OPERATION = (
    'def delete(conn, doc_id):\n    """Retire the pointers, then drop fragments no document holds."""\n'
    "    conn.execute(...)"
)


def test_the_lower_twin_moves_below_a_different_fragment():
    ranked = [candidate(1, SYNC, 0.60), candidate(2, ASYNC, 0.58), candidate(3, OPERATION, 0.55)]
    mark_twins(ranked)
    assert [c.fragment_id for c in ranked] == [1, 3, 2]
    assert ranked[2].twin_of == 1 and ranked[2].final_score == pytest.approx(0.58 * twins.FACTOR)
    assert ranked[0].twin_of is None and ranked[1].twin_of is None


def test_async_prefixes_and_keywords_are_set_aside():
    assert words(POOL) == (words(ASYNC_POOL)[0], False) and words(ASYNC_POOL)[1]
    assert twins.twins(words(SYNC), words(ASYNC))
    assert not twins.twins(words(SYNC), words(OPERATION))


def test_fragments_written_from_one_template_are_not_twins():
    """Two API references alike but for the model they name: the name is what the
    question asks for, so neither is scaled."""
    doc = "Load the {} model from PyTorch Hub, pretrained on ImageNet, for image classification with 1000 classes."
    ranked = [candidate(1, doc.format("resnet50"), 0.6), candidate(2, doc.format("resnet101"), 0.59)]
    mark_twins(ranked)
    assert [c.twin_of for c in ranked] == [None, None]


def test_short_and_different_fragments_are_left_alone():
    ranked = [candidate(1, "return x", 0.6), candidate(2, "return x", 0.5), candidate(3, OPERATION, 0.4)]
    mark_twins(ranked)
    assert [c.twin_of for c in ranked] == [None, None, None]
    assert [c.final_score for c in ranked] == [0.6, 0.5, 0.4]


def test_a_twin_is_compared_with_the_fragments_kept_not_with_other_twins():
    """Three copies: the second and third are twins of the first (the first stays the
    one the trace names), and only the head is compared."""
    ranked = [candidate(i, SYNC, 0.9 - i / 100) for i in range(1, 4)]
    ranked += [candidate(10 + i, f"{OPERATION} {i}", 0.5) for i in range(twins.HEAD)]
    ranked.append(candidate(99, SYNC, 0.1))
    mark_twins(ranked)
    assert [c.twin_of for c in ranked if c.fragment_id in (2, 3)] == [1, 1]
    assert next(c for c in ranked if c.fragment_id == 99).twin_of is None  # beyond the head
