"""The one check of a problem+json error body (RFC 9457), for every transport's responses."""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from api.errors import PROBLEM_CODES, problem_type

PROBLEM = "application/problem+json"


def _body(response: Any) -> dict[str, Any]:
    data = response.get_data() if hasattr(response, "get_data") else response.content
    return dict(json.loads(data))


def assert_problem(
    response: Any,
    status: int | Collection[int] | None = None,
    code: str | None = None,
    field: str | None = None,
    instance: str | None = None,
) -> dict[str, Any]:
    """`response` is a problem+json with this status, code and (if given) field; its body.

    Whatever is asked, the body must be whole: its status is the response's, its type
    names its code, a title, a detail and an instance are there, and a gateway code has
    the status and title of `PROBLEM_CODES`. Works on Flask's test responses, the
    harness's `Reply` and httpx's responses.
    """
    body = _body(response)
    if isinstance(status, int):
        assert response.status_code == status, body
    elif status is not None:
        assert response.status_code in status, body
    mimetype = response.headers.get("content-type", "").split(";")[0].strip()
    assert mimetype == PROBLEM, response.headers
    assert body["status"] == response.status_code, body
    if code is not None:
        assert body["code"] == code, body
    assert body["type"] == problem_type(body["code"]), body
    assert body["title"], body
    assert body["detail"], body
    assert body["instance"], body
    if instance is not None:
        assert body["instance"] == instance, body
    if field is not None:
        assert body.get("field") == field, body
    if body["code"] in PROBLEM_CODES:
        assert (body["status"], body["title"]) == PROBLEM_CODES[body["code"]], body
    return body
