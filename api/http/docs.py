"""The OpenAPI document at /openapi.json and Swagger UI at /docs, with no CDN.

The document is kept as YAML (``api/http/openapi.yaml``) and served as JSON, made
once from the same loaded document that the request schemas come from.

Swagger UI 5 (the first major version that renders OpenAPI 3.1) is served from the
assets that the pinned ``flask-swagger-ui`` package ships in ``flask_swagger_ui/dist``;
only those files are used, not that package's own blueprint, so the page and its
initializer script stay ours.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from pathlib import Path

from flask import Blueprint, Response, redirect, request, send_from_directory, url_for
from flask.blueprints import BlueprintSetupState
from werkzeug.wrappers import Response as WerkzeugResponse

from api.http.schemas import openapi_document as load_openapi_document

SWAGGER_UI_PACKAGE = "flask_swagger_ui"
ASSET_MAX_AGE_SECONDS = 86_400

docs_blueprint = Blueprint("docs", __name__)

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>cardroom API</title>
  <link rel="stylesheet" href="{css}">
  <link rel="stylesheet" href="{page_css}">
  <link rel="icon" type="image/png" href="{icon}" sizes="32x32">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="{bundle}"></script>
  <script src="{preset}"></script>
  <script src="{initializer}"></script>
</body>
</html>
"""

_INITIALIZER = """window.addEventListener("load", function () {{
  window.ui = SwaggerUIBundle({{
    url: {document_url},
    dom_id: "#swagger-ui",
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: "StandaloneLayout"
  }});
}});
"""


@functools.cache
def swagger_ui_dist() -> Path:
    """Return the folder of Swagger UI's static files; RuntimeError if it is missing."""
    spec = importlib.util.find_spec(SWAGGER_UI_PACKAGE)
    if spec is None or spec.origin is None:
        raise RuntimeError(f"The package {SWAGGER_UI_PACKAGE!r} (Swagger UI assets) is missing.")
    folder = Path(spec.origin).parent / "dist"
    if not (folder / "swagger-ui-bundle.js").is_file():
        raise RuntimeError(f"No Swagger UI assets in {folder}.")
    return folder


def swagger_ui_version() -> str:
    """Return the version of the Swagger UI assets served, e.g. "5.34.0"."""
    return (swagger_ui_dist() / "VERSION").read_text(encoding="utf-8").strip().lstrip("v")


@functools.cache
def openapi_json() -> bytes:
    """Return the OpenAPI document as the JSON served at /openapi.json."""
    return json.dumps(load_openapi_document(), indent=2, ensure_ascii=False).encode("utf-8")


@docs_blueprint.record_once
def _check_assets(state: BlueprintSetupState) -> None:
    # Fail when the app is built, not on the first visit to /docs; and read the document
    # then, rather than on the first request that has a body to validate.
    swagger_ui_dist()
    openapi_json()


@docs_blueprint.get("/openapi.json")
def openapi_document() -> Response:
    """Serve the OpenAPI 3.1 document of the gateway."""
    response = Response(openapi_json(), mimetype="application/json")
    # As a static file was served: revalidated on every use, 304 to a matching ETag.
    response.cache_control.no_cache = True
    response.cache_control.max_age = 0
    response.add_etag()
    response.make_conditional(request)
    return response


@docs_blueprint.get("/docs")
def swagger_ui() -> Response:
    """Serve the Swagger UI page for /openapi.json."""
    html = _PAGE.format(
        css=url_for("docs.asset", filename="swagger-ui.css"),
        page_css=url_for("docs.asset", filename="index.css"),
        icon=url_for("docs.asset", filename="favicon-32x32.png"),
        bundle=url_for("docs.asset", filename="swagger-ui-bundle.js"),
        preset=url_for("docs.asset", filename="swagger-ui-standalone-preset.js"),
        initializer=url_for("docs.initializer"),
    )
    return Response(html, mimetype="text/html")


@docs_blueprint.get("/docs/")
def swagger_ui_slash() -> WerkzeugResponse:
    """/docs/ is the same page: a permanent redirect to /docs."""
    return redirect(url_for("docs.swagger_ui"), code=308)


@docs_blueprint.get("/docs/initializer.js")
def initializer() -> Response:
    """Serve the script that starts Swagger UI on /openapi.json."""
    document_url = url_for("docs.openapi_document")
    script = _INITIALIZER.format(document_url=json.dumps(document_url))
    return Response(script, mimetype="text/javascript")


@docs_blueprint.get("/docs/assets/<path:filename>")
def asset(filename: str) -> Response:
    """Serve one of Swagger UI's static files."""
    return send_from_directory(swagger_ui_dist(), filename, max_age=ASSET_MAX_AGE_SECONDS)
