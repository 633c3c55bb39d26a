"""Request bodies checked against the schemas of the gateway's OpenAPI document.

The document (``api/http/openapi.yaml``, OpenAPI 3.1, whose schemas are JSON Schema 2020-12)
is loaded once. A body is validated against ``components.schemas.<Name>``; the first
fault, in a fixed order, becomes one `ApiError` naming the field to blame:

- not JSON (or NaN, Infinity, a repeated member) -> 400 ``malformed_json``;
- JSON but not an object -> 400 ``invalid_body``;
- a member the schema does not list -> 422 ``unknown_field``;
- a required member missing -> 422 ``missing_field``;
- a member of the wrong JSON type -> 422 ``invalid_type`` (booleans are not numbers;
  20.0 is the integer 20, 20.5 is no integer);
- any other constraint (range, enum, length, pattern...) -> 422 ``invalid_field``, or
  the code the schema names under the ``x-problem-code`` extension, where the fault is
  one the rules name too (a call of four cards is ``invalid_combination`` as a call of
  six cards that make no combination is; a name that is too long is ``invalid_name``);
- a discriminator's value no branch has -> 422 ``invalid_field``, or the discriminator's
  ``x-problem-code`` (``unsupported_game``, ``unsupported_action``).

Fields are named by a dotted path, with array indexes in brackets: ``options.colour``,
``cards[2]``. A schema that is a ``oneOf`` picks its branch first: by the
``discriminator`` member when it has one, otherwise the branch whose required members
the body holds, so errors are about that branch rather than "matches no branch".
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

import yaml
from jsonschema import Draft202012Validator, TypeChecker, validators
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from api.errors import ApiError, from_rule_error, problem
from api.games.common import copy_state
from api.i18n import N_
from api.i18n.catalogs import Phrase

OPENAPI_PATH = Path(__file__).with_name("openapi.yaml")
# libyaml's loader reads the document about seven times faster than the pure-Python one.
_YAML_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DOCUMENT_URI = "urn:cardroom:openapi"
_SCHEMA_PREFIX = "#/components/schemas/"

# The order in which faults at the same place are reported: a misspelt member is
# reported as unknown before the member it was meant to be is reported missing.
_KEYWORD_ORDER: dict[str, int] = {
    "additionalProperties": 0,
    "required": 1,
    "type": 2,
    "const": 3,
    "enum": 3,
    # a text's length before its pattern: "at most 64 characters" says more of a long one
    "minLength": 4,
    "maxLength": 4,
}

# NOTE: a JSON type, as it fills "Field {name} must be {expected}."
_TYPE_NAMES: dict[str, str] = {
    "integer": Phrase(N_("an integer")),
    "number": Phrase(N_("a number")),
    "string": Phrase(N_("a string")),
    "boolean": Phrase(N_("true or false")),
    "object": Phrase(N_("an object")),
    "array": Phrase(N_("an array")),
    "null": "null",
}
# NOTE: the request body as a whole, as it fills "Field {name} ..." templates.
_THE_BODY = Phrase(N_("the body"))


def _is_strict_integer(checker: TypeChecker, instance: object) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


@functools.cache
def _python_pattern(pattern: str) -> re.Pattern[str]:
    """A schema's pattern (ECMA-262) as a Python one: ECMA's `$` is the end of the text,
    while Python's also matches before a final newline ("Ah\\n" would pass "^...$")."""
    translated, escaped, in_class = [], False, False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "$":
            char = r"\Z"
        translated.append(char)
    return re.compile("".join(translated))


def _pattern(
    validator: Validator, pattern: str, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if isinstance(instance, str) and not _python_pattern(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


# Only ints are integers here: a body's integral numbers written as 20.0 are decoded as
# ints (`_number`), and a boolean is never a number.
StrictValidator: type[Validator] = validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator,
    validators={"pattern": _pattern},
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_strict_integer),
)


@functools.cache
def openapi_document() -> dict[str, Any]:
    """Return the gateway's OpenAPI document, read once from api/http/openapi.yaml."""
    with OPENAPI_PATH.open(encoding="utf-8") as handle:
        document: dict[str, Any] = yaml.load(handle, Loader=_YAML_LOADER)  # noqa: S506 (a safe loader)
    return document


@functools.cache
def _registry() -> Registry[Any]:
    resource = Resource.from_contents(openapi_document(), default_specification=DRAFT202012)
    registry: Registry[Any] = Registry().with_resource(_DOCUMENT_URI, resource)
    return registry


@functools.cache
def validator_for(schema: str) -> Validator:
    """Return a validator for `components.schemas.<schema>`; KeyError if there is none."""
    if schema not in openapi_document()["components"]["schemas"]:
        raise KeyError(f"The OpenAPI document has no schema {schema!r}.")
    reference = {"$ref": f"{_DOCUMENT_URI}{_SCHEMA_PREFIX}{schema}"}
    return StrictValidator(reference, registry=_registry())


def _schema(name: str) -> dict[str, Any]:
    found: dict[str, Any] = openapi_document()["components"]["schemas"][name]
    return found


def field_path(path: Iterable[str | int]) -> str:
    """Return a dotted field path with bracketed indexes, e.g. "options.cards[2]"."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a JSON number")


def _object_without_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"member {key!r} appears more than once")
        result[key] = value
    return result


def _is_json_media_type(content_type: str | None) -> bool:
    if content_type is None:
        return False
    return content_type.split(";", 1)[0].strip().lower() == "application/json"


# No request body nests deeper than a few levels; a deeper one is refused before the
# schema is checked, whose validator (and its messages) recurse once per level.
MAX_BODY_DEPTH = 32


def _depth(value: Any) -> int:
    """How deeply `value` nests arrays and objects (0 for a scalar), without recursion;
    counting stops past MAX_BODY_DEPTH."""
    depth = 0
    level = [value]
    while depth <= MAX_BODY_DEPTH:
        containers = [item for item in level if isinstance(item, (dict, list))]
        if not containers:
            break
        depth += 1
        level = [
            child
            for item in containers
            for child in (item.values() if isinstance(item, dict) else item)
        ]
    return depth


def _number(text: str) -> float | int:
    """A JSON number written with a fraction or an exponent: an integer when it is one.

    JSON Schema 2020-12 counts 20.0 as the integer 20, and clients whose numbers are all
    doubles (Swift, Kotlin, JavaScript's JSON of a computed value) write it so; 20.5 stays
    a number that no integer field accepts.
    """
    value = float(text)
    if value.is_integer():
        return int(value)
    return value


def _decode(request_data: bytes) -> Any:
    try:
        value = json.loads(
            request_data,
            parse_float=_number,
            parse_constant=_reject_constant,
            object_pairs_hook=_object_without_repeats,
        )
    except (ValueError, RecursionError) as error:
        raise problem(
            "malformed_json", "The request body is not valid JSON: {error}.", error=error
        ) from None
    if _depth(value) > MAX_BODY_DEPTH:
        raise problem(
            "invalid_body",
            "The request body nests arrays and objects deeper than {max_body_depth} levels.",
            max_body_depth=MAX_BODY_DEPTH,
        )
    if _has_lone_surrogate(value):
        raise problem(
            "malformed_json",
            "The request body is not valid JSON: a \\u escape names half of a UTF-16"
            " surrogate pair (D800-DFFF) without the other half, which is no character.",
        )
    return value


def _has_lone_surrogate(value: Any) -> bool:
    """Whether a string of `value` (a member name included) holds an unpaired surrogate,
    which JSON's \\u escapes can spell but UTF-8 cannot encode."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            pending += item.keys()
            pending += item.values()
        elif isinstance(item, list):
            pending += item
        elif isinstance(item, str):
            try:
                item.encode()
            except UnicodeEncodeError:
                return True
    return False


def _quoted(values: Sequence[Any]) -> str:
    return ", ".join(json.dumps(value) for value in values)


def _describe_type(expected: str | Sequence[str]) -> str:
    names = [expected] if isinstance(expected, str) else list(expected)
    if len(names) == 1:
        return _TYPE_NAMES.get(names[0], names[0])
    return " or ".join(_TYPE_NAMES.get(name, name) for name in names)


# The detail of each constraint keyword: a template of the field's `name` and the
# constraint's `value` (a count's template in the singular, then the plural).
_CONSTRAINT_DETAILS: dict[str, str | tuple[str, str]] = {
    "enum": N_("Field {name} must be one of {value}."),
    "const": N_("Field {name} must be {value}."),
    "minimum": N_("Field {name} must be at least {value}."),
    "maximum": N_("Field {name} must be at most {value}."),
    "exclusiveMinimum": N_("Field {name} must be greater than {value}."),
    "exclusiveMaximum": N_("Field {name} must be less than {value}."),
    "multipleOf": N_("Field {name} must be a multiple of {value}."),
    "minLength": (
        N_("Field {name} must be at least {value} character long."),
        N_("Field {name} must be at least {value} characters long."),
    ),
    "maxLength": (
        N_("Field {name} must be at most {value} character long."),
        N_("Field {name} must be at most {value} characters long."),
    ),
    "pattern": N_("Field {name} must be {value}."),
    "minItems": (
        N_("Field {name} must hold at least {value} item."),
        N_("Field {name} must hold at least {value} items."),
    ),
    "maxItems": (
        N_("Field {name} must hold at most {value} item."),
        N_("Field {name} must hold at most {value} items."),
    ),
    "uniqueItems": N_("Field {name} must not hold the same item twice."),
    "minProperties": (
        N_("Field {name} must hold at least {value} member."),
        N_("Field {name} must hold at least {value} members."),
    ),
    "maxProperties": (
        N_("Field {name} must hold at most {value} member."),
        N_("Field {name} must hold at most {value} members."),
    ),
}


def _constraint_detail(error: ValidationError, name: str) -> tuple[str, dict[str, Any]]:
    """The detail template of a constraint fault and its parameters."""
    keyword = error.validator
    value: Any = error.validator_value
    schema: Any = error.schema
    template = _CONSTRAINT_DETAILS.get(str(keyword))
    because = schema.get("x-because") if isinstance(schema, Mapping) else None
    if keyword == "not" and because:
        # a schema may say why a field has no place here, under the x-because extension
        return N_("Field {name} has no place here: {value}."), {
            "name": name,
            "value": Phrase(because),
        }
    if template is None:
        return N_("Field {name} does not have an accepted value."), {"name": name}
    if isinstance(template, tuple):
        template = template[0] if value == 1 else template[1]
    elif keyword == "enum":
        value = _quoted(value)
    elif keyword == "const":
        value = json.dumps(value)
    elif keyword == "pattern":
        # A schema may say in words what its pattern means, under the x-expected extension.
        hint = schema.get("x-expected") if isinstance(schema, Mapping) else None
        if not hint:
            return N_("Field {name} must match the pattern {value}."), {
                "name": name,
                "value": value,
            }
        value = Phrase(hint)
    return template, {"name": name, "value": value}


def _error_order(error: ValidationError) -> tuple[list[str], int, str]:
    path = [f"{part:08d}" if isinstance(part, int) else str(part) for part in error.path]
    return path, _KEYWORD_ORDER.get(str(error.validator), 9), str(error.message)


def _coded(code: str | None, detail: str, field: str | None, **params: Any) -> ApiError:
    """422 invalid_field, or the code a schema names for the fault (`x-problem-code`)."""
    if code is None:
        return problem("invalid_field", detail, field=field, **params)
    return from_rule_error(code, detail, field, **params)


def _problem_code(schema: Any) -> str | None:
    """The code a schema names for its constraint faults (the `x-problem-code` extension)."""
    code = schema.get("x-problem-code") if isinstance(schema, Mapping) else None
    return None if code is None else str(code)


def _to_api_error(error: ValidationError) -> ApiError:
    path = list(error.absolute_path)
    keyword = error.validator
    if keyword == "additionalProperties" and isinstance(error.instance, Mapping):
        listed = error.schema.get("properties", {}) if isinstance(error.schema, Mapping) else {}
        unknown = sorted(str(key) for key in error.instance if key not in listed)
        field = field_path([*path, unknown[0]]) if unknown else field_path(path)
        allowed = ", ".join(listed) if listed else Phrase(N_("none"))
        return problem(
            "unknown_field",
            "Field '{member}' is not allowed here; the allowed fields are: {allowed}.",
            field=field,
            member=field,
            allowed=allowed,
        )
    if keyword == "required" and isinstance(error.instance, Mapping):
        required = error.validator_value if isinstance(error.validator_value, list) else []
        missing = [str(key) for key in required if key not in error.instance]
        field = field_path([*path, missing[0]]) if missing else field_path(path)
        return problem("missing_field", "Field '{member}' is required.", field=field, member=field)
    field = field_path(path)
    name = f"'{field}'" if field else _THE_BODY
    if keyword == "type":
        expected_type: Any = error.validator_value
        expected = _describe_type(expected_type)
        return problem(
            "invalid_type",
            "Field {name} must be {expected}.",
            field=field or None,
            extra={"expected": expected_type},
            name=name,
            expected=expected,
        )
    code = _problem_code(error.schema)
    if keyword in {"oneOf", "anyOf"}:
        return _coded(
            code, "Field {name} matches none of its accepted forms.", field or None, name=name
        )
    template, params = _constraint_detail(error, name)
    return _coded(code, template, field or None, **params)


def _oneof_branch(schema: Mapping[str, Any], body: Mapping[str, Any]) -> str | None:
    """Return the component name of the oneOf branch that `body` is meant to be, if any."""
    branches = [
        str(option["$ref"]).removeprefix(_SCHEMA_PREFIX)
        for option in schema.get("oneOf", [])
        if isinstance(option, Mapping) and "$ref" in option
    ]
    if not branches:
        return None
    discriminator = schema.get("discriminator")
    if isinstance(discriminator, Mapping):
        member = str(discriminator["propertyName"])
        mapping = {
            str(key): str(value).removeprefix(_SCHEMA_PREFIX)
            for key, value in discriminator.get("mapping", {}).items()
        }
        if member not in body:
            raise problem(
                "missing_field", "Field '{member}' is required.", field=member, member=member
            )
        value = body[member]
        if not isinstance(value, str):
            raise problem(
                "invalid_type",
                "Field '{member}' must be a string.",
                field=member,
                extra={"expected": "string"},
                member=member,
            )
        if value not in mapping:
            raise _coded(
                _problem_code(discriminator),
                "Field '{member}' must be one of {choices}.",
                member,
                member=member,
                choices=_quoted(list(mapping)),
            )
        return mapping[value]

    def present(name: str) -> int:
        required = _schema(name).get("required", [])
        return sum(1 for key in required if key in body) - len(required)

    return max(branches, key=present)


@functools.cache
def _discriminator(schema: str) -> tuple[str, dict[str, str]] | None:
    """The discriminating member of a oneOf schema and its value -> branch mapping."""
    discriminator = _schema(schema).get("discriminator")
    if not isinstance(discriminator, Mapping):
        return None
    mapping = {
        str(key): str(value).removeprefix(_SCHEMA_PREFIX)
        for key, value in discriminator.get("mapping", {}).items()
    }
    return str(discriminator["propertyName"]), mapping


def _selected_branch(schema: str, body: Mapping[str, Any]) -> str | None:
    """The oneOf branch a body's discriminator value names, if it names one."""
    found = _discriminator(schema)
    if found is None:
        return None
    member, mapping = found
    value = body.get(member)
    return mapping.get(value) if isinstance(value, str) else None


def _first_error(errors: Iterable[ValidationError]) -> ValidationError | None:
    return min(errors, key=_error_order, default=None)


def validate_body(body: Any, schema: str) -> dict[str, Any]:
    """Return `body` if it matches `components.schemas.<schema>`, else raise its first fault."""
    if not isinstance(body, dict):
        raise problem("invalid_body", "The request body must be a JSON object.")
    selected = _selected_branch(schema, body)
    if selected is not None and validator_for(selected).is_valid(body):
        # the discriminator's values are distinct constants, so the one branch they
        # select is the only one a valid body can match: the whole oneOf holds
        return body
    first = _first_error(validator_for(schema).iter_errors(body))
    if first is None:
        return body
    branch = _oneof_branch(_schema(schema), body)
    if branch is not None:
        narrower = _first_error(validator_for(branch).iter_errors(body))
        if narrower is not None:
            first = narrower
    raise _to_api_error(first)


# Bodies that passed, by schema and exact bytes. Decoding and validation are a pure
# function of the bytes, and clients send the same few small bodies over and over
# (`{"action": "declare", "choice": "in"}`): such a body is decoded and validated once
# per process (about 60 µs) and then copied from here (about 1 µs). Bounded: a body
# over _ACCEPTED_MAX_BYTES is never kept, and a full memo is emptied and starts over.
_ACCEPTED_MAX_BYTES = 512
_ACCEPTED_MAX_ENTRIES = 4096
_accepted: dict[tuple[str, bytes], dict[str, Any]] = {}


def parse_json_body(request_data: bytes, content_type: str | None, schema: str) -> dict[str, Any]:
    """Decode and validate a JSON request body against `components.schemas.<schema>`."""
    if not request_data.strip():
        return validate_body({}, schema)
    if not _is_json_media_type(content_type):
        sent = content_type or "no Content-Type"
        raise problem(
            "unsupported_media_type",
            "The request body must be sent as application/json, not {sent}.",
            field="Content-Type",
            sent=sent,
        )
    key = (schema, bytes(request_data))
    known = _accepted.get(key)
    if known is not None:
        return copy_state(known)
    body = validate_body(_decode(request_data), schema)
    if len(request_data) <= _ACCEPTED_MAX_BYTES:
        if len(_accepted) >= _ACCEPTED_MAX_ENTRIES:
            _accepted.clear()
        _accepted[key] = copy_state(body)
    return body
