"""Settings: defaults that depend on the machine, and their overrides."""

from __future__ import annotations

import pytest

from app import settings as settings_module
from app.settings import Settings


@pytest.mark.parametrize(("cores", "pool"), [(1, 2), (2, 4), (16, 32)])
def test_read_pool_is_two_connections_per_usable_core(monkeypatch, cores, pool):
    monkeypatch.setattr(settings_module, "usable_cores", lambda: cores)
    assert Settings.from_env({}).pool_max_size == pool
    assert Settings.from_env({"CONTEXTS_POOL_MAX_SIZE": "7"}).pool_max_size == 7


def test_usable_cores_are_those_this_process_may_run_on():
    import os

    assert 1 <= settings_module.usable_cores() <= (os.cpu_count() or 1)
    with pytest.raises(ValueError, match="CONTEXTS_POOL_MAX_SIZE"):
        Settings.from_env({"CONTEXTS_POOL_MAX_SIZE": "0"})
