"""SQL files are cut by statement (app/ingest/chunk_sql.py): a `;` inside a string, a
quoted name, a comment or a dollar-quoted body ends nothing; each object created is a
fragment named by it, with its comments and its `comment on`."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.ingest.chunk_sql import SqlChunker, split_statements
from app.ingest.normalize import SourceDocument

ROOT = Path(__file__).parents[2]

TRICKY = """\
-- Orders: the header of the file.
set search_path = app; set lock_timeout = '1s';

-- The total of an order; a comment's ; ends nothing.
create or replace function app.order_total(p_order bigint)
returns numeric
language plpgsql
as $body$
declare
    note text := 'a ; in a string';
    quoted text := E'it\\'s ; escaped';
    nested text := $$ a ; in a nested body $$;
begin
    /* a block comment ; /* nested ; */ still in it ; */
    return (select sum(l.price) from app."order;lines" l where l.order_id = $1);
end
$body$;
comment on function app.order_total(bigint) is 'Sum of an order''s lines; in its currency.';

create table if not exists "App"."Line Items" (id bigint primary key, label text default ';');

grant select on app."order;lines" to reader;
grant execute on function app.order_total(bigint) to reader;
select 'unterminated at the end'"""


def test_a_semicolon_inside_strings_names_comments_and_bodies_ends_nothing():
    spans = [TRICKY[a:b] for a, b in split_statements(TRICKY)]
    assert [s.split()[0].lower() for s in spans] == [
        "set",
        "set",
        "create",
        "comment",
        "create",
        "grant",
        "grant",
        "select",
    ]
    function = spans[2]
    assert function.startswith("create or replace function app.order_total") and function.endswith("$body$;")
    assert spans[-1] == "select 'unterminated at the end'"


def test_each_created_object_is_a_fragment_named_by_it_with_its_comments():
    chunks = SqlChunker(400, 40).chunk(TRICKY + "\n")
    by_symbol = {c.symbol: c for c in chunks}
    total = by_symbol["app.order_total"]
    assert total.text.startswith("-- The total of an order")
    assert "comment on function app.order_total(bigint)" in total.text  # its documentation goes with it
    assert by_symbol["App.Line Items"].text.startswith('create table if not exists "App"."Line Items"')
    # Every line is in a fragment, in order; the header goes with what follows it.
    assert chunks[0].text.startswith("-- Orders: the header of the file.")
    assert [c.start_line for c in chunks] == sorted(c.start_line for c in chunks)
    covered = {n for c in chunks for n in range(c.start_line, c.end_line + 1)}
    lines = (TRICKY + "\n").splitlines()
    assert {n + 1 for n, line in enumerate(lines) if line.strip()} <= covered
    assert "grant select" in chunks[-1].text and chunks[-1].text.endswith("'unterminated at the end'")


def test_a_drop_before_a_create_of_the_same_object_goes_with_it():
    text = (
        "-- Why the signature changed.\n"
        "drop function if exists api.find(text);\n"
        "create function api.find(p text, q int) returns int language sql as $$ select 1 $$;\n"
        "create view api.v as select 1;\n"
    )
    chunks = SqlChunker(400, 40).chunk(text)
    assert [(c.symbol, c.start_line, c.end_line) for c in chunks] == [("api.find", 1, 3), ("api.v", 4, 4)]
    # A drop alone (a migration retiring a signature) names nothing: it is no definition.
    alone = SqlChunker(400, 40).chunk("drop function if exists api.find(text);\ngrant usage on schema api to reader;\n")
    assert [(c.symbol, c.start_line, c.end_line) for c in alone] == [(None, 1, 2)]


def test_psql_commands_and_mysql_delimiters():
    text = (
        "\\set ON_ERROR_STOP on\n"
        "DELIMITER //\n"
        "CREATE PROCEDURE shop.restock() BEGIN UPDATE stock SET n = n + 1; SELECT 1; END //\n"
        "DELIMITER ;\n"
        "CREATE TABLE shop.stock (n int);\n"
    )
    spans = [text[a:b] for a, b in split_statements(text)]
    assert spans == [
        "\\set ON_ERROR_STOP on",
        "CREATE PROCEDURE shop.restock() BEGIN UPDATE stock SET n = n + 1; SELECT 1; END //",
        "CREATE TABLE shop.stock (n int);",
    ]


def test_a_long_function_is_cut_between_its_statements_within_the_bound():
    body = "\n".join(f"    perform app.step_{i}(p_order, 'argument number {i}');" for i in range(200))
    text = f"create function app.long(p_order bigint) returns void language plpgsql as $$\nbegin\n{body}\nend\n$$;\n"
    chunks = SqlChunker(120, 10).chunk(text)
    assert len(chunks) > 5 and all(c.symbol == "app.long" for c in chunks)
    assert all(c.token_count <= 120 for c in chunks)
    assert all(c.text.rstrip().endswith((";", "$$")) for c in chunks), "cut where a statement ends"


@pytest.mark.parametrize("path", sorted((ROOT / "sql").rglob("*.sql")), ids=lambda p: p.name)
def test_this_repositorys_sql_is_cut_by_statement(path):
    text = path.read_text()
    chunks = SqlChunker(400, 40).chunk(text)
    covered = {n for c in chunks for n in range(c.start_line, c.end_line + 1)}
    assert {n + 1 for n, line in enumerate(text.splitlines()) if line.strip()} <= covered
    names = {c.symbol for c in chunks}
    for line in text.splitlines():
        if line.startswith("create or replace function "):
            name = line.removeprefix("create or replace function ").split("(")[0]
            assert name in names, f"{path.name}: {name}"


def test_an_sql_file_is_ingested_as_code_named_by_its_objects(pipeline):
    prepared = pipeline.prepare(SourceDocument(path="db/orders.sql", content=TRICKY))
    assert (prepared.namespace, prepared.doc.kind) == ("code", "code")
    assert "app.order_total" in {c.symbol for c in prepared.chunks}


def test_policies_and_triggers_are_named_per_table():
    text = (
        "drop policy if exists own_only on data.traces;\n"
        "create policy own_only on data.traces for select using (true);\n"
        "create policy own_only on data.replays using (true);\n"
        "create trigger audit after insert on data.traces for each row execute function data.log();\n"
    )
    chunks = SqlChunker(400, 40).chunk(text)
    assert [(c.symbol, c.start_line, c.end_line) for c in chunks] == [
        ("own_only on data.traces", 1, 2),
        ("own_only on data.replays", 3, 3),
        ("audit on data.traces", 4, 4),
    ]
