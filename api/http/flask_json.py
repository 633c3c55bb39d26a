"""Flask's JSON responses through `api.jsonio` (orjson), keys in insertion order."""

from __future__ import annotations

import json
from typing import Any, cast

from flask import Flask, Response
from flask.json.provider import JSONProvider

from api import jsonio


class FastJSONProvider(JSONProvider):
    """`jsonify` and `app.json` of the gateway: compact JSON, keys in insertion order."""

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        """JSON text of `obj` (keyword arguments are ignored: the output is always compact)."""
        return jsonio.dumps(obj)

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        """The value of JSON text."""
        return json.loads(s, **kwargs)

    def response(self, *args: Any, **kwargs: Any) -> Response:
        """An application/json response of the value, as `jsonify` builds it."""
        value = self._prepare_response_obj(args, kwargs)
        response_class = cast(type[Response], self._app.response_class)
        return response_class(jsonio.dumps_bytes(value), mimetype="application/json")


def install(app: Flask) -> None:
    """Serve the app's JSON responses through orjson."""
    app.json = FastJSONProvider(app)
