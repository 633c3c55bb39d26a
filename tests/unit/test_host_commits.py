"""The host's note of each table's last commit (api.adapters.host_commits): a later
version is newer, nothing else is; a slot two tables share is taken in turns without
a false hint for the one it left; children forked after it was made share it. The
copies of those commits: handed out whole, for that table and version only, never torn."""

from __future__ import annotations

import logging
import multiprocessing
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from api.adapters.host_commits import HostCommits


def test_only_a_later_version_noted_is_newer() -> None:
    commits = HostCommits.create()
    assert commits.latest("t1") <= 1  # nothing noted
    commits.committed("t1", 5)
    assert commits.latest("t1") > 4
    assert commits.latest("t1") <= 5
    assert commits.latest("t1") <= 6
    assert commits.latest("t2") <= 1


def test_an_earlier_commit_noted_late_does_not_hide_a_later_one() -> None:
    commits = HostCommits.create()
    commits.committed("t1", 7)
    commits.committed("t1", 6)  # a slower worker's earlier commit
    assert commits.latest("t1") > 6


def test_tables_sharing_a_slot_take_turns_without_a_false_hint() -> None:
    commits = HostCommits.create(slots=1)
    commits.committed("t1", 9)
    commits.committed("t2", 2)  # t1's note is gone: no hint for t1, never a wrong one
    assert commits.latest("t1") <= 3
    assert commits.latest("t2") > 1


def test_a_copy_is_handed_out_for_its_table_and_version_only() -> None:
    commits = HostCommits.create()
    commits.committed("t1", 5, b"the commit at 5")
    assert commits.latest("t1") == 5
    assert commits.copy_of("t1", 5) == b"the commit at 5"
    assert commits.copy_of("t1", 4) is None
    assert commits.copy_of("t2", 5) is None
    commits.committed("t1", 6)  # noted without a copy: the one at 5 stays, for 5 only
    assert commits.copy_of("t1", 6) is None
    assert commits.copy_of("t1", 5) == b"the commit at 5"


def test_a_copy_too_large_is_not_kept_but_its_version_is_noted() -> None:
    commits = HostCommits.create(copies=2)
    commits.committed("t1", 3, b"x" * (commits.copy_capacity + 1))
    assert commits.copy_of("t1", 3) is None
    assert commits.latest("t1") == 3
    commits.committed("t1", 4, b"x" * commits.copy_capacity)
    assert commits.copy_of("t1", 4) == b"x" * commits.copy_capacity


def test_without_copies_only_versions_are_noted() -> None:
    commits = HostCommits.create(copies=0)
    commits.committed("t1", 3, b"a copy")
    assert commits.latest("t1") > 2
    assert commits.copy_of("t1", 3) is None


def test_tables_sharing_a_copy_slot_take_turns() -> None:
    commits = HostCommits.create(copies=1)
    commits.committed("t1", 2, b"t1 at 2")
    commits.committed("t2", 7, b"t2 at 7")
    assert commits.copy_of("t1", 2) is None
    assert commits.copy_of("t2", 7) == b"t2 at 7"


def test_a_torn_copy_is_not_handed_out() -> None:
    commits = HostCommits.create(copies=1)
    commits.committed("t1", 2, b"a longer commit at version 2")
    memory = commits._copies
    assert memory is not None
    at = memory.find(b"version 2")
    memory[at : at + 9] = b"version 3"  # another write's bytes, half landed
    assert commits.copy_of("t1", 2) is None


@given(
    writes=st.lists(
        st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(1, 5), st.binary(max_size=40)),
        max_size=12,
    ),
    torn=st.lists(st.tuples(st.integers(0, 3 * 16384 - 1), st.integers(0, 255)), max_size=3),
)
def test_a_copy_handed_out_is_always_the_one_written_for_that_table_and_version(
    writes: list[tuple[str, int, bytes]], torn: list[tuple[int, int]]
) -> None:
    """Whatever was written in whatever order, and whatever bytes a torn write left,
    a copy handed out is bytes written for that very table and version."""
    commits = HostCommits.create(slots=4, copies=3)
    written: dict[tuple[str, int], set[bytes]] = {}
    for table_id, version, data in writes:
        commits.committed(table_id, version, data)
        written.setdefault((table_id, version), set()).add(data)
    memory = commits._copies
    assert memory is not None
    for offset, value in torn:
        memory[offset] = value
    for table_id in ("a", "b", "c"):
        for version in range(1, 6):
            copy = commits.copy_of(table_id, version)
            assert copy is None or copy in written.get((table_id, version), set())


def _note(commits: HostCommits) -> None:
    commits.committed("shared", 3, b"the child's commit")


def test_a_child_forked_after_it_was_made_shares_it() -> None:
    commits = HostCommits.create()
    child = multiprocessing.get_context("fork").Process(target=_note, args=(commits,))
    child.start()
    child.join(30)
    assert child.exitcode == 0
    assert commits.latest("shared") > 2
    assert commits.copy_of("shared", 3) == b"the child's commit"


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


def test_the_copies_are_read_from_the_environment() -> None:
    from api.settings import Settings

    assert Settings.from_env({}).host_copies == 0  # off until a known stall is mended
    assert Settings.from_env({"HOST_COPIES": "0"}).host_copies == 0
    assert Settings.from_env({"HOST_COPIES": "65536"}).host_copies == 65_536


@pytest.mark.parametrize("raw", ["many", "-1", "65537"])
def test_a_bad_count_of_copies_stops_the_master_in_one_line(
    raw: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from api.adapters import host_commits
    from api.runtime import gunicorn_conf

    monkeypatch.setattr(host_commits, "SHARED", None)
    monkeypatch.setenv("HOST_COPIES", raw)
    logger = logging.getLogger("test-gunicorn-master-copies")
    server = SimpleNamespace(
        master_pid=1,
        cfg=SimpleNamespace(address=[]),
        log=SimpleNamespace(error=logger.error, error_log=logger),
    )
    with caplog.at_level(logging.ERROR), pytest.raises(SystemExit):
        gunicorn_conf.on_starting(server)
    assert "HOST_COPIES" in caplog.text
    assert host_commits.SHARED is None
