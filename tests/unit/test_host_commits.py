"""The host's note of each table's last commit (api.adapters.host_commits): a later
version is newer, nothing else is; a slot two tables share is taken in turns without
a false hint for the one it left; children forked after it was made share it."""

from __future__ import annotations

import logging
import multiprocessing
from types import SimpleNamespace

import pytest

from api.adapters.host_commits import HostCommits


def test_only_a_later_version_noted_is_newer() -> None:
    commits = HostCommits.create()
    assert not commits.newer("t1", 1)  # nothing noted
    commits.committed("t1", 5)
    assert commits.newer("t1", 4)
    assert not commits.newer("t1", 5)
    assert not commits.newer("t1", 6)
    assert not commits.newer("t2", 1)


def test_an_earlier_commit_noted_late_does_not_hide_a_later_one() -> None:
    commits = HostCommits.create()
    commits.committed("t1", 7)
    commits.committed("t1", 6)  # a slower worker's earlier commit
    assert commits.newer("t1", 6)


def test_tables_sharing_a_slot_take_turns_without_a_false_hint() -> None:
    commits = HostCommits.create(slots=1)
    commits.committed("t1", 9)
    commits.committed("t2", 2)  # t1's note is gone: no hint for t1, never a wrong one
    assert not commits.newer("t1", 3)
    assert commits.newer("t2", 1)


def _note(commits: HostCommits) -> None:
    commits.committed("shared", 3)


def test_a_child_forked_after_it_was_made_shares_it() -> None:
    commits = HostCommits.create()
    child = multiprocessing.get_context("fork").Process(target=_note, args=(commits,))
    child.start()
    child.join(30)
    assert child.exitcode == 0
    assert commits.newer("shared", 2)


def test_gunicorns_master_makes_it_before_forking_the_workers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from api.adapters import host_commits
    from api.runtime import gunicorn_conf

    monkeypatch.setattr(host_commits, "SHARED", None)
    # a master given its sockets (re-executed): it binds nothing itself
    server = SimpleNamespace(
        master_pid=1,
        cfg=SimpleNamespace(address=[]),
        log=SimpleNamespace(error_log=logging.getLogger("test-gunicorn-master")),
    )
    gunicorn_conf.on_starting(server)
    assert isinstance(host_commits.SHARED, HostCommits)
