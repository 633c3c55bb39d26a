"""api/http/openapi.yaml: a valid OpenAPI 3.1 document whose examples match its schemas."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from flask import Flask
from openapi_spec_validator import validate as validate_openapi
from openapi_spec_validator.validation.exceptions import OpenAPIValidationError
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from api.errors import PROBLEM_CODES, RULE_ERROR_DEFAULT_STATUS, RULE_ERROR_STATUS
from api.games import guts
from api.http.docs import docs_blueprint, swagger_ui_version
from api.http.schemas import OPENAPI_PATH, StrictValidator, openapi_document, parse_json_body

METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
DOCUMENT_URI = "urn:test:openapi"
# The request bodies the routes validate with parse_json_body.
REQUEST_SCHEMAS = (
    "CreatePlayer",
    "CreateTable",
    "TakeSeat",
    "QuickSeat",
    "Action",
    "EvaluateRequest",
    "WalletTransfer",
    "SeatBot",
    "SetLimit",
    "LimitSlot",
    "Exclude",
    "SessionSettings",
    "SessionSetting",
)
# Who may call what: the security requirements of each operation, by operationId.
Requirements = list[dict[str, list[str]]]
PLAYER: Requirements = [{"playerKey": []}, {"identityToken": []}]
ACTOR: Requirements = [*PLAYER, {"seatToken": []}]
READ: Requirements = [{}, *ACTOR]
PUBLIC: Requirements = [{}]
OPERATOR: Requirements = [{"operatorKey": []}]
SECURITY = {
    "createPlayer": [{}, {"operatorKey": []}],
    "getMe": PLAYER,
    "addKey": PLAYER,
    "revokeKey": PLAYER,
    "listMySeats": PLAYER,
    "getMyLedger": PLAYER,
    "createTable": PLAYER,
    "listTables": READ,
    "getTable": READ,
    "takeSeat": PLAYER,
    "quickSeat": PLAYER,
    "leaveSeat": [*ACTOR, *OPERATOR],
    "closeTable": [*PLAYER, *OPERATOR],
    "getMyLimits": PLAYER,
    "setMyLimit": PLAYER,
    "confirmMyLimit": PLAYER,
    "getPlayerLimits": OPERATOR,
    "setPlayerLimit": OPERATOR,
    "getMyExclusion": PLAYER,
    "excludeMe": PLAYER,
    "listExclusions": OPERATOR,
    "listMyDeals": PLAYER,
    "exportMyDeals": PLAYER,
    "getMyDeal": PLAYER,
    "exportHand": READ,
    "getPlayerOverview": OPERATOR,
    "getMySession": PLAYER,
    "setMySession": PLAYER,
    "confirmMySession": PLAYER,
    "performAction": ACTOR,
    "listEvents": READ,
    "streamEvents": READ,
    "createStreamTicket": ACTOR,
    "getHand": READ,
    "evaluate": READ,
    "depositChips": OPERATOR,
    "withdrawChips": OPERATOR,
    "getPlayerLedger": OPERATOR,
    "exportLedger": OPERATOR,
    "auditLedger": OPERATOR,
    "listDeadWebhooks": OPERATOR,
    "getHealth": PUBLIC,
    "getReadiness": PUBLIC,
    "getMetrics": PUBLIC,
    "getOpenApiDocument": PUBLIC,
    "getDocs": PUBLIC,
    "seatBot": [*PLAYER, {"operatorKey": []}],
    "removeBot": [*PLAYER, {"operatorKey": []}],
    "listBotStrategies": PUBLIC,
}
# The operator's API: every operation takes an operator key.
OPERATOR_API = (
    "depositChips",
    "withdrawChips",
    "getPlayerLedger",
    "exportLedger",
    "auditLedger",
    "listDeadWebhooks",
)
# The credentials' problem codes and the operations that must list each in their answers.
CREDENTIAL_CODES = {
    "missing_token": (
        "createTable",
        "takeSeat",
        "performAction",
        "leaveSeat",
        "getMe",
        "getMyLedger",
        *OPERATOR_API,
    ),
    "invalid_token": (
        "createTable",
        "takeSeat",
        "performAction",
        "createStreamTicket",
        "getMyLedger",
        *OPERATOR_API,
    ),
    "invalid_ticket": ("streamEvents",),
    "player_required": ("createTable", "takeSeat", "getMe", "addKey", "listMySeats", "getMyLedger"),
    "operator_required": ("createPlayer", *OPERATOR_API),
    "wrong_seat": ("leaveSeat",),
    "not_seated": ("performAction",),
    "player_not_found": ("getMe", "depositChips", "withdrawChips", "getPlayerLedger"),
    "key_not_found": ("revokeKey",),
    "already_seated": ("takeSeat",),
    "not_table_creator": ("closeTable",),
    "table_started": ("closeTable",),
    "table_closing": ("takeSeat",),
    "limit_reached": ("takeSeat", "depositChips"),
    "limit_cooling": ("confirmMyLimit", "confirmMySession"),
    "nothing_to_confirm": ("confirmMyLimit", "confirmMySession"),
    "player_excluded": ("takeSeat", "depositChips"),
    "exclusion_shorter": ("excludeMe",),
    "session_limit_reached": ("takeSeat",),
    "too_many_keys": ("addKey",),
    "insufficient_funds": ("takeSeat", "performAction", "withdrawChips"),
    "quota_exceeded": ("createTable", "streamEvents"),
    "identity_provider_unavailable": ("createTable", "getMe", "performAction", "evaluate"),
}


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return openapi_document()


def walk(node: Any, pointer: str = "") -> Iterator[tuple[str, Any]]:
    """Every (JSON pointer, value) in the document, depth first."""
    yield pointer, node
    if isinstance(node, dict):
        for key, value in node.items():
            escaped = str(key).replace("~", "~0").replace("/", "~1")
            yield from walk(value, f"{pointer}/{escaped}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from walk(value, f"{pointer}/{index}")


def resolve(document: dict[str, Any], reference: str) -> Any:
    assert reference.startswith("#/"), reference
    node: Any = document
    for part in reference[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def deref(document: dict[str, Any], node: Any) -> Any:
    while isinstance(node, dict) and "$ref" in node:
        node = resolve(document, node["$ref"])
    return node


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method in METHODS:
            if method in item:
                yield path, method, item[method]


def schema_at(document: dict[str, Any], pointer: str) -> Any:
    """A validator for the schema at `pointer`, its $refs resolved within the document."""
    registry: Registry[Any] = Registry().with_resource(
        DOCUMENT_URI, Resource.from_contents(document, default_specification=DRAFT202012)
    )
    return StrictValidator({"$ref": f"{DOCUMENT_URI}#{pointer}"}, registry=registry)


# ----------------------------------------------------------------- validity


def test_the_document_is_valid_openapi_3_1(document: dict[str, Any]) -> None:
    assert document["openapi"] == "3.1.0"
    validate_openapi(document)


def test_the_validator_would_notice_a_broken_document(document: dict[str, Any]) -> None:
    broken = copy.deepcopy(document)
    broken["components"]["schemas"]["TakeSeat"]["properties"]["name"]["type"] = "strin"
    with pytest.raises(OpenAPIValidationError):
        validate_openapi(broken)
    broken = copy.deepcopy(document)
    broken["components"]["parameters"]["Limit"]["in"] = "body"
    with pytest.raises(OpenAPIValidationError):
        validate_openapi(broken)


def test_every_ref_resolves(document: dict[str, Any]) -> None:
    references = [
        node["$ref"]
        for _, node in walk(document)
        if isinstance(node, dict) and isinstance(node.get("$ref"), str)
    ]
    assert len(references) > 100
    for reference in references:
        assert resolve(document, reference) is not None, reference


def test_every_component_is_used(document: dict[str, Any]) -> None:
    text = json.dumps(document)
    for kind in ("schemas", "parameters", "headers", "responses"):
        for name in document["components"][kind]:
            assert f'"#/components/{kind}/{name}"' in text, f"{kind}/{name} is never used"


def test_every_operation_is_complete(document: dict[str, Any]) -> None:
    ids = []
    for path, method, operation in operations(document):
        where = f"{method.upper()} {path}"
        assert operation.get("operationId"), where
        assert operation.get("summary"), where
        assert operation.get("responses"), where
        assert any(code.startswith("2") for code in operation["responses"]), where
        assert "500" in operation["responses"], where
        ids.append(operation["operationId"])
    assert len(ids) == len(set(ids))
    assert len(ids) == 49


def test_every_operation_says_who_may_call_it(document: dict[str, Any]) -> None:
    schemes = document["components"]["securitySchemes"]
    assert set(schemes) == {"playerKey", "seatToken", "operatorKey", "identityToken"}
    for scheme in schemes.values():
        assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")
        assert scheme["description"]
    assert schemes["identityToken"]["bearerFormat"] == "JWT"
    assert "security" not in document  # each operation says its own
    found = {}
    for path, method, operation in operations(document):
        where = f"{method.upper()} {path}"
        security = operation.get("security")
        assert security, where
        for requirement in security:
            assert set(requirement) <= set(schemes), where
            assert all(scopes == [] for scopes in requirement.values()), where
        # the table's reads may be anonymous (a player's own and the operator's are not);
        # writes need a credential, but in open mode the player's creation (and ranking
        # hands, which changes nothing)
        if method == "get" and not path.startswith(("/v1/players/", "/v1/operator/")):
            assert {} in security, where
        if method in ("post", "delete") and operation["operationId"] != "createPlayer":
            assert ({} in security) == (path == "/v1/evaluate"), where
        found[operation["operationId"]] = security
    assert found == SECURITY
    # the two modes of a player's creation are described where it is
    create = document["paths"]["/v1/players"]["post"]["description"]
    assert "open mode" in create
    assert "operator mode" in create


def answered_codes(document: dict[str, Any], operation: dict[str, Any]) -> dict[str, int]:
    """Each problem code an operation's error answers give an example of, with its status."""
    codes = {}
    for status, response in operation["responses"].items():
        if int(status) < 400:
            continue
        media = deref(document, response)["content"]["application/problem+json"]
        for example in media["examples"].values():
            codes[example["value"]["code"]] = int(status)
    return codes


def test_the_credentials_refusals_are_in_the_answers(document: dict[str, Any]) -> None:
    by_id = {operation["operationId"]: operation for _, _, operation in operations(document)}
    for code, operation_ids in CREDENTIAL_CODES.items():
        status = PROBLEM_CODES[code][0] if code in PROBLEM_CODES else RULE_ERROR_STATUS[code]
        for operation_id in operation_ids:
            answered = answered_codes(document, by_id[operation_id])
            assert answered.get(code) == status, (code, operation_id)
    # an identity provider's token may be sent wherever one is accepted
    for path, method, operation in operations(document):
        if {"identityToken": []} in operation["security"]:
            answered = answered_codes(document, operation)
            assert answered.get("identity_provider_unavailable") == 503, (method, path)
    # what needs no credential ignores one that does not hold: none answers 401 or 403
    # but the stream, for its ticket, and the lobby, whose `mine=true` is a player's
    for path, method, operation in operations(document):
        if {} not in operation["security"] or operation["operationId"] in {
            "createPlayer",
            "listTables",
        }:
            continue
        answered = answered_codes(document, operation)
        refused = {code for code, status in answered.items() if status in (401, 403)}
        expected = {"invalid_ticket"} if path.endswith("/events/stream") else set()
        assert refused == expected, (method, path)
    stream = document["paths"]["/v1/tables/{table_id}/events/stream"]["get"]
    names = {deref(document, p)["name"]: deref(document, p) for p in stream["parameters"]}
    assert names["ticket"]["in"] == "query"


def test_path_parameters_are_declared(document: dict[str, Any]) -> None:
    for path, item in document["paths"].items():
        declared = {deref(document, p)["name"] for p in item.get("parameters", [])}
        for method in METHODS:
            if method in item:
                declared |= {
                    deref(document, p)["name"]
                    for p in item[method].get("parameters", [])
                    if deref(document, p)["in"] == "path"
                }
        assert declared >= set(re.findall(r"{(\w+)}", path)), path


def test_every_error_response_is_problem_json(document: dict[str, Any]) -> None:
    for path, method, operation in operations(document):
        for status, response in operation["responses"].items():
            if int(status) < 400:
                continue
            content = deref(document, response)["content"]
            assert list(content) == ["application/problem+json"], (method, path, status)
            media = content["application/problem+json"]
            assert media["schema"] == {"$ref": "#/components/schemas/Problem"}
            assert media["examples"], (method, path, status)
            for example in media["examples"].values():
                assert example["value"]["status"] == int(status), (method, path, status)


def test_problem_examples_use_the_code_tables(document: dict[str, Any]) -> None:
    for name, response in document["components"]["responses"].items():
        media = response.get("content", {}).get("application/problem+json")
        if media is None:
            continue
        for example in media["examples"].values():
            value = example["value"]
            code = value["code"]
            assert value["type"] == f"https://cardroom.dev/problems/{code}", name
            if code in PROBLEM_CODES:
                assert (value["status"], value["title"]) == PROBLEM_CODES[code], name
            else:
                status = RULE_ERROR_STATUS.get(code, RULE_ERROR_DEFAULT_STATUS)
                assert value["status"] == status, name


def test_the_description_lists_every_error_code(document: dict[str, Any]) -> None:
    description = document["info"]["description"]
    for code, (status, title) in PROBLEM_CODES.items():
        assert f"| `{code}` | {status} | {title} |" in description, code
    for code, rule_status in RULE_ERROR_STATUS.items():
        assert f"| `{code}` | {rule_status} |" in description, code
    for topic in (
        "seat token",
        "player key",
        "operator key",
        "JWT",
        "open mode",
        "operator mode",
        "stream ticket",
        "Idempotency-Key",
        "ETag",
        "Events",
        "problem+json",
    ):
        assert topic in description


# ----------------------------------------------------------------- examples


def examples(document: dict[str, Any]) -> Iterator[tuple[str, str, Any]]:
    """(where, pointer of the schema, example value) for every example in the document."""
    for pointer, node in walk(document):
        if not isinstance(node, dict):
            continue
        if "schema" in node and isinstance(node["schema"], dict):
            if "example" in node:
                yield pointer, f"{pointer}/schema", node["example"]
            for name, example in node.get("examples", {}).items():
                yield f"{pointer}/examples/{name}", f"{pointer}/schema", example["value"]
        elif "/components/schemas/" in pointer or "/schema" in pointer:
            listed = node.get("examples")
            if isinstance(listed, list) and not pointer.endswith("/properties"):
                for index, value in enumerate(listed):
                    yield f"{pointer}/examples/{index}", pointer, value


def test_every_example_matches_its_schema(document: dict[str, Any]) -> None:
    found = list(examples(document))
    assert len(found) > 80
    for where, pointer, value in found:
        errors = [error.message for error in schema_at(document, pointer).iter_errors(value)]
        assert not errors, f"{where}: {errors}"


def test_the_example_checker_would_notice_a_bad_example(document: dict[str, Any]) -> None:
    pointer = "/components/schemas/TakeSeat"
    assert list(schema_at(document, pointer).iter_errors({"name": "Ada", "buy_in": True}))
    assert list(schema_at(document, pointer).iter_errors({"name": "Ada", "buy_in": 5.0}))


def test_request_examples_pass_the_gateway_s_own_validation(document: dict[str, Any]) -> None:
    checked = 0
    for path, method, operation in operations(document):
        body = operation.get("requestBody")
        if body is None:
            continue
        media = body["content"]["application/json"]
        schema = media["schema"]["$ref"].removeprefix("#/components/schemas/")
        assert schema in REQUEST_SCHEMAS, (method, path)
        for example in media["examples"].values():
            raw = json.dumps(example["value"]).encode()
            assert parse_json_body(raw, "application/json", schema) == example["value"]
            checked += 1
    assert checked >= 11


def test_request_schemas_reject_unknown_members(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    pending = list(REQUEST_SCHEMAS)
    seen = set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        schema = schemas[name]
        branches = [option["$ref"].rsplit("/", 1)[1] for option in schema.get("oneOf", [])]
        if branches:
            pending.extend(branches)
            continue
        assert schema["additionalProperties"] is False, name
        for member in schema["properties"].values():
            if "$ref" in member and member["$ref"] != "#/components/schemas/Card":
                pending.append(member["$ref"].rsplit("/", 1)[1])
    assert {"CreateGutsTable", "CreatePaiuteTable", "CallAction", "OddsQuery"} <= seen


# ----------------------------------------------------------------- the Guts options


def test_guts_options_match_the_rules_module(document: dict[str, Any]) -> None:
    properties = document["components"]["schemas"]["CreateGutsTable"]["properties"]
    defaults = guts.validate_options({})
    assert set(properties) - {"game", "name"} == set(defaults)
    for option, value in defaults.items():
        if "default" in properties[option]:
            assert properties[option]["default"] == value, option


def test_guts_examples_are_accepted_by_the_rules_module(document: dict[str, Any]) -> None:
    for example in document["components"]["schemas"]["CreateGutsTable"]["examples"]:
        options = {k: v for k, v in example.items() if k not in {"game", "name"}}
        guts.validate_options(options)


# ----------------------------------------------------------------- serving


@pytest.fixture
def client() -> Any:
    app = Flask("docs-test")
    app.register_blueprint(docs_blueprint)
    return app.test_client()


def test_openapi_json_is_served(client: Any) -> None:
    response = client.get("/openapi.json")
    assert response.status_code == 200
    assert response.content_type == "application/json"
    assert json.loads(response.get_data()) == yaml.safe_load(OPENAPI_PATH.read_text("utf-8"))
    again = client.get("/openapi.json", headers={"If-None-Match": response.headers["ETag"]})
    assert again.status_code == 304


def test_the_yaml_keeps_prose_readable() -> None:
    text = OPENAPI_PATH.read_text("utf-8")
    assert OPENAPI_PATH.suffix == ".yaml"
    # Paragraphs are block scalars, not strings with escaped line breaks.
    assert "\\n" not in text
    assert "description: |" in text


def test_docs_page_uses_local_assets_only(client: Any) -> None:
    response = client.get("/docs")
    assert response.status_code == 200
    assert response.content_type.startswith("text/html")
    page = response.get_data(as_text=True)
    assert "http://" not in page
    assert "https://" not in page
    sources = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert "/docs/assets/swagger-ui-bundle.js" in sources
    for source in sources:
        asset = client.get(source)
        assert asset.status_code == 200, source
        assert asset.get_data(), source
    initializer = client.get("/docs/initializer.js").get_data(as_text=True)
    assert 'url: "/openapi.json"' in initializer


def test_swagger_ui_renders_openapi_3_1() -> None:
    major = int(swagger_ui_version().split(".")[0])
    assert major >= 5


# ----------------------------------------------------------------- links

EXPRESSION = re.compile(r"\$(request|response)\.(body|path|query|header)(?:#(/[^}]*)|\.([\w-]+))")


def pointed(value: Any, pointer: str) -> bool:
    """Whether the JSON pointer `pointer` names a member of `value`."""
    for part in pointer.lstrip("/").split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            return False
    return True


def link_problems(document: dict[str, Any]) -> Iterator[str]:
    """What is wrong with the document's links: a target, parameter or expression that
    does not hold (a response pointer must name a member of every example answer)."""
    by_id = {operation["operationId"]: operation for _, _, operation in operations(document)}
    where_is = {
        operation["operationId"]: (path, method) for path, method, operation in operations(document)
    }
    for path, method, operation in operations(document):
        declared = {
            (deref(document, p)["in"], deref(document, p)["name"])
            for p in operation.get("parameters", [])
        }
        for status, response in operation["responses"].items():
            response = deref(document, response)
            answers = [
                example["value"]
                for media in response.get("content", {}).values()
                for example in media.get("examples", {}).values()
            ]
            for name, link in response.get("links", {}).items():
                where = f"{method.upper()} {path} {status} {name}"
                target = by_id.get(link["operationId"])
                if target is None:
                    yield f"{where}: no operation {link['operationId']}"
                    continue
                accepts = {
                    (deref(document, p)["in"], deref(document, p)["name"])
                    for p in target.get("parameters", [])
                }
                for key, value in link.get("parameters", {}).items():
                    location, _, parameter = key.partition(".")
                    credential = (location, parameter) == ("header", "Authorization")
                    if not credential and (location, parameter) not in accepts:
                        yield f"{where}: {target['operationId']} takes no {key}"
                    if credential and target["security"] == [{}]:
                        yield f"{where}: {target['operationId']} takes no credential"
                    for source, part, pointer, member in EXPRESSION.findall(value):
                        if (source, part) == ("response", "body") and not all(
                            pointed(answer, pointer) for answer in answers
                        ):
                            yield f"{where}: {pointer} not in an example answer"
                        headers = response.get("headers", {})
                        if (source, part) == ("response", "header") and member not in headers:
                            yield f"{where}: the answer has no header {member}"
                        asked = source == "request" and part != "header"
                        if asked and (part, member) not in declared:
                            yield f"{where}: the request has no {part} {member}"
                    if "$" in value and not EXPRESSION.search(value):
                        yield f"{where}: {value} is no runtime expression"
                if "requestBody" in link:
                    target_path, target_method = where_is[link["operationId"]]
                    escaped = target_path.replace("~", "~0").replace("/", "~1")
                    body = f"/paths/{escaped}/{target_method}/requestBody/content/application~1json"
                    if list(schema_at(document, f"{body}/schema").iter_errors(link["requestBody"])):
                        yield f"{where}: its body is not one {link['operationId']} takes"


def test_links_lead_a_client_from_a_new_player_to_moves_and_leaving(
    document: dict[str, Any],
) -> None:
    assert list(link_problems(document)) == []
    followed = {
        (operation["operationId"], link["operationId"])
        for _, _, operation in operations(document)
        for response in operation["responses"].values()
        for link in deref(document, response).get("links", {}).values()
    }
    reached, frontier = {"createPlayer"}, ["createPlayer"]
    while frontier:
        source = frontier.pop()
        for start, end in followed:
            if start == source and end not in reached:
                reached.add(end)
                frontier.append(end)
    assert {"createTable", "takeSeat", "performAction", "leaveSeat", "getHand"} <= reached
    assert {"getTable", "listEvents", "streamEvents", "createStreamTicket"} <= reached


def test_the_link_checker_would_notice_a_broken_link(document: dict[str, Any]) -> None:
    broken = copy.deepcopy(document)
    grant = broken["paths"]["/v1/tables/{table_id}/seats"]["post"]["responses"]["201"]
    grant["links"]["PerformAction"]["parameters"]["path.table_id"] = "$response.body#/table_id"
    grant["links"]["LeaveSeat"]["parameters"]["path.seats"] = "$response.body#/seat"
    grant["links"]["GetTable"]["operationId"] = "getTables"
    grant["links"]["Rebuy"]["requestBody"] = {"action": "rebuy", "amount": 0}
    assert len(list(link_problems(broken))) == 4
