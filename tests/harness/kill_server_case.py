"""Not collected by the suite (no test_ prefix): tests/test_harness.py runs it in a
separate pytest to prove a dead server ends a run within seconds."""

import psutil


def test_kills_the_server(db_url, pg_server):
    postmaster = psutil.Process(pg_server.pid)
    for process in [*postmaster.children(recursive=True), postmaster]:
        process.kill()
    psutil.wait_procs([postmaster], timeout=10)


def test_after_the_server_died_one(db_url):
    raise AssertionError("must not run: the run ends when the server is gone")


def test_after_the_server_died_two(db_url):
    raise AssertionError("must not run: the run ends when the server is gone")
