"""gunicorn's config for `--sections`: the deployed one (api/runtime/gunicorn_conf.py),
each worker's app metered by `bench.gateway.sections` once it is loaded."""

from __future__ import annotations

import os
from pathlib import Path

from api.runtime import gunicorn_conf
from api.runtime.gunicorn_conf import *  # noqa: F403 (gunicorn reads the module's names)


def post_worker_init(worker: object) -> None:  # type: ignore[no-redef]
    """The deployed hook, then the meter around the worker's app."""
    gunicorn_conf.post_worker_init(worker)
    from bench.gateway.sections import DIRECTORY_VARIABLE, SectionMeter

    meter = SectionMeter(Path(os.environ[DIRECTORY_VARIABLE]))
    worker.wsgi = meter.install(worker.wsgi)  # type: ignore[attr-defined]
