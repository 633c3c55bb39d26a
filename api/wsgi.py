"""The WSGI entry point for gunicorn.

gunicorn -c api/runtime/gunicorn_conf.py api.wsgi:app
"""

from __future__ import annotations

from api.app import create_app
from api.bootstrap import bootstrap
from api.runtime.answers import closing
from api.runtime.logs import configure_logging
from api.settings import Settings

settings = Settings.from_env()
configure_logging(settings.log_level)
app = create_app(settings, bootstrap(settings))
# an answer after which the connection closes says so (api.runtime.answers)
app.wsgi_app = closing(app.wsgi_app)  # type: ignore[method-assign,assignment]
