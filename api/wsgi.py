"""The WSGI entry point for gunicorn: `gunicorn -c api/gunicorn_conf.py api.wsgi:app`."""

from __future__ import annotations

from api import create_app
from api.logs import configure_logging
from api.settings import Settings

settings = Settings.from_env()
configure_logging(settings.log_level)
app = create_app(settings)
