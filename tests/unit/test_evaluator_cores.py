"""How many processes `python -m evaluator` starts by default: the cores it may use,
capped by a container's CPU limit, read from either cgroup version."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evaluator.processes import available_cores, cpu_quota, split_address


@pytest.mark.parametrize(
    ("files", "limit"),
    [
        ({"cpu.max": "150000 100000\n"}, 1.5),
        ({"cpu.max": "max 100000\n"}, None),
        ({"cpu/cpu.cfs_quota_us": "200000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 2.0),
        ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
        ({}, None),
    ],
)
def test_the_cpu_limit_of_either_cgroup_version(
    tmp_path: Path, files: dict[str, str], limit: float | None
) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert cpu_quota(tmp_path) == limit


def test_the_default_is_at_least_one_and_at_most_the_affinity() -> None:
    assert 1 <= available_cores() <= len(os.sched_getaffinity(0))


def test_an_address_splits_at_its_last_colon() -> None:
    assert split_address("[::]:50051") == ("[::]", 50051)
    assert split_address("127.0.0.1:0") == ("127.0.0.1", 0)
