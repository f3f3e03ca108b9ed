"""Not collected by the suite (no test_ prefix): tests/test_harness.py runs it in a
separate pytest to prove a dead server ends a run within seconds."""

import psutil


def test_kills_the_server(db_url, pg_server):
    postmaster = psutil.Process(pg_server.pid)
    children = postmaster.children(recursive=True)
    postmaster.kill()  # first: a postmaster left alive would restart its children
    for process in children:
        try:
            process.kill()
        except psutil.NoSuchProcess:
            pass  # exited on its own once the postmaster was gone
    psutil.wait_procs([postmaster, *children], timeout=10)


def test_after_the_server_died_one(db_url):
    raise AssertionError("must not run: the run ends when the server is gone")


def test_after_the_server_died_two(db_url):
    raise AssertionError("must not run: the run ends when the server is gone")
