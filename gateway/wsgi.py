"""The WSGI entry point for gunicorn.

gunicorn -c gateway/runtime/gunicorn_conf.py gateway.wsgi:app
"""

from __future__ import annotations

from gateway.app import create_app
from gateway.runtime.logs import configure_logging
from gateway.settings import Settings

settings = Settings.from_env()
configure_logging(settings.log_level)
app = create_app(settings)
