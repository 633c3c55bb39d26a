"""The players' languages: negotiation, hand descriptions, event lines, problems."""

from __future__ import annotations

import pytest
import werkzeug.exceptions

from api import jsonio
from api.errors import ApiError, Moment, problem, table_not_found
from api.games.common import RuleError
from api.http.pipeline import negotiate
from api.http.problems import problem_body, problem_of
from api.http.schemas import parse_json_body
from api.i18n import LANGUAGES, hands
from api.i18n.bodies import localise, localise_body
from api.i18n.catalogs import say, say_plural
from api.i18n.events import LINES, event_line
from api.i18n.page import page_catalog
from evaluator.guts import describe_guts as evaluator_guts
from evaluator.paiute import describe_paiute as evaluator_paiute

TRANSLATED = [language for language in LANGUAGES if language != "en"]


@pytest.mark.parametrize(
    ("header", "language"),
    [
        ("sw", "sw"),
        ("sw-KE,sw;q=0.9,en;q=0.8", "sw"),
        ("ps-AF", "ps"),
        ("hu-HU,hu;q=0.9", "hu"),
        ("et", "et"),
        ("de-DE,de;q=0.9", "en"),
        ("fr, hu;q=0.5, et;q=0.7", "et"),
        ("en-GB,en;q=0.9,sw;q=0.8", "en"),
        ("sw;q=0, hu", "hu"),
        ("*", "en"),
        ("", "en"),
        ("not a ;;; header", "en"),
    ],
)
def test_the_language_is_the_one_the_header_prefers(header: str, language: str) -> None:
    assert negotiate(header) == language


@pytest.mark.parametrize("cards", [2, 3])
def test_english_guts_descriptions_are_the_evaluators(cards: int) -> None:
    strengths = hands.guts_strengths(cards)
    assert len(strengths) == len(set(strengths)) > 0
    for strength in strengths:
        assert hands.describe_guts("en", cards, strength) == evaluator_guts(cards, strength)


def test_english_paiute_descriptions_are_the_evaluators() -> None:
    strengths = hands.paiute_strengths()
    for strength in strengths:
        assert hands.describe_paiute("en", strength) == evaluator_paiute(strength)


def test_the_strengths_are_every_one_the_evaluator_knows() -> None:
    # a strength the decoder does not list is one the evaluator refuses to describe
    for cards in (2, 3):
        listed = set(hands.guts_strengths(cards))
        for strength in range(7 << 12):
            if strength not in listed:
                with pytest.raises(ValueError, match="is not the strength"):
                    evaluator_guts(cards, strength)


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_description_is_worded_in_every_language(language: str) -> None:
    words = hands.translated(language)
    assert len(words) == len(hands.translated("en"))
    for english, worded in words.items():
        assert worded != english, (language, english)
        assert worded[0] == worded[0].upper()


def test_descriptions_in_each_language() -> None:
    pair = 2 << 12 | 13 << 4 | 9
    assert hands.describe_guts("hu", 3, pair) == "Királypár, 9 kísérő"
    assert hands.describe_guts("et", 3, pair) == "Kuningate paar, lisakaart 9"
    four_two = 3 << 16 | 12 << 4 | 7
    assert hands.describe_paiute("et", four_two) == "Neli emandat ja kaks seitset"
    assert hands.describe_paiute("hu", four_two) == "Négy dáma és két hetes"
    assert hands.describe_paiute("ps", 0) == "ګټونکی ترکیب نشته"
    assert hands.describe_paiute("sw", 0) == "Hakuna mchanganyiko wa ushindi"


def test_plurals_follow_the_catalogue() -> None:
    assert say_plural("en", "{who} wins {n} chip", "{who} wins {n} chips", 1, {"who": "Ann"}) == (
        "Ann wins 1 chip"
    )
    assert say_plural("ps", "{who} wins {n} chip", "{who} wins {n} chips", 3, {"who": "X"}) == (
        "X 3 چپونه ګټي"
    )
    assert say_plural("ps", "{who} wins {n} chip", "{who} wins {n} chips", 1, {"who": "X"}) == (
        "X 1 چپ ګټي"
    )


def test_a_message_without_a_translation_is_said_in_english() -> None:
    assert say("hu", "No such message {x}.", {"x": 1}) == "No such message 1."


ENGLISH_LINES = {
    "table_created": ({}, "The table opened"),
    "seated": ({"seat": 1, "name": "ann", "stack": 20}, "ann sat down with 20 chips"),
    "leaving": ({"seat": 2}, "Seat 2 leaves after this deal"),
    "cashed_out": ({"seat": 2, "amount": 1}, "Seat 2 cashed out 1 chip"),
    "deal_started": ({"hand_number": 4, "dealer": 1}, "Deal 4: Seat 1 deals"),
    "ante": ({"seat": 1, "amount": 0}, None),
    "declarations_revealed": (
        {"choices": {"1": "in", "2": "out", "3": "in", "4": "in"}},
        "In: Seat 1, Seat 3 and Seat 4",
    ),
    "pot_won": ({"seat": "ghost", "amount": 6}, "The ghost wins 6 chips"),
    "wild_card": ({"card": "Th", "rank": 10}, "Wild card: 10♥ (10s are wild)"),
    "drew": ({"seat": 1, "card": "As"}, "Seat 1 took A♠ from the pile"),
    "called": (
        {"seat": 3, "description": "Three aces and three fours"},
        "Seat 3 calls with Three aces and three fours",
    ),
    "pot_carried": ({"pot": 9}, "The pot of 9 chips carries over"),
}


@pytest.mark.parametrize("kind", sorted(ENGLISH_LINES))
def test_english_lines_are_the_pages(kind: str) -> None:
    data, line = ENGLISH_LINES[kind]
    assert event_line("en", {"id": 1, "type": kind, "data": data}) == line


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_event_type_has_a_line(language: str) -> None:
    data = {"seat": 1, "name": "ann", "stack": 5, "amount": 2, "pot": 2, "game_number": 1}
    data |= {"hand_number": 1, "dealer": 1, "choices": {}, "shares": [{"seat": 1}]}
    data |= {"card": "Kh", "rank": 13, "description": "Royal flush"}
    for kind in LINES:
        line = event_line(language, {"id": 1, "type": kind, "data": data})
        assert line, (language, kind)
    assert event_line(language, {"id": 1, "type": "no_such_event", "data": {}}) is None


def test_a_body_gets_lines_and_translated_descriptions() -> None:
    body = {
        "hand": {"strength": 2 << 12 | 14, "description": "Pair of aces"},
        "events": [{"id": 7, "type": "showdown", "data": {}}],
        "name": "Pair of aces",
    }
    localise(body, "hu")
    assert body["hand"] == {"strength": 2 << 12 | 14, "description": "Ászpár"}
    assert body["events"] == [{"id": 7, "type": "showdown", "data": {}, "line": "Leszámolás"}]
    assert body["name"] == "Pair of aces"  # only descriptions are translated


def test_an_english_body_without_events_is_left_as_it_is() -> None:
    text = b'{"description":"Pair of aces","x":1.5}'
    assert localise_body("en", text) is text
    assert localise_body("et", text) == b'{"description":"\xc3\x84ssade paar","x":1.5}'


def test_problems_keep_their_code_and_type_in_every_language() -> None:
    errors = [
        table_not_found("t_x"),
        problem("invalid_cursor", "The cursor {after} is past.", after=3),
    ]
    for error in errors:
        english = problem_body(error, "/v1/x", None)
        for language in TRANSLATED:
            said = problem_body(error, "/v1/x", language)
            for member in ("code", "type", "status", "instance"):
                assert said[member] == english[member]
    worded = problem_body(table_not_found("t_x"), "/v1/x", "hu")
    assert worded["title"] == "Nincs ilyen asztal"
    assert worded["detail"] == "Nincs 't_x' azonosítójú asztal."
    assert problem_body(table_not_found("t_x"), "/v1/x", "en")["detail"] == (
        "No table 't_x' exists."
    )


def test_a_moment_is_written_as_each_language_writes_a_date() -> None:
    error = problem(
        "limit_cooling",
        "This increase can be confirmed once its cooling period is over, at {from_at}.",
        extra={"from_at": 1_796_435_100.0},
        from_at=Moment(1_796_435_100.0),
    )
    assert error.detail.endswith("at 2026-12-05 01:45 UTC.")
    said = {language: problem_body(error, "/v1/x", language)["detail"] for language in TRANSLATED}
    assert "2026. dec. 5. 1:45:00 UTC" in said["hu"]
    assert "5. dets 2026 01:45:00 UTC" in said["et"]
    assert all("1796435100" not in detail and "T01:45" not in detail for detail in said.values())


def test_a_rule_error_keeps_its_english_detail() -> None:
    error = RuleError("already_declared", "Seat {seat} has already declared.", "seat", seat=3)
    assert error.detail == "Seat 3 has already declared."
    assert str(error) == "Seat 3 has already declared."
    assert error.template == "Seat {seat} has already declared."


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_page_catalogue(language: str) -> None:
    catalog = page_catalog(language)
    assert catalog["lang"] == language
    assert catalog["dir"] == ("rtl" if language == "ps" else "ltr")
    assert catalog["plural"]["one"] == 0
    assert catalog["plural"]["other"] == 1
    assert isinstance(catalog["messages"], dict)
    if language == "en":
        assert catalog["messages"] == {}


@pytest.mark.parametrize(
    "body",
    [
        b'{"events":[{"id":1,"type":"showdown","data":{}}],"next":1}',
        b'{"table":{"x":{"events":[{"id":1,"type":"showdown","data":{}}]}},"n":1}',
        b'{"table":{"events":[{"id":1,"type":"showdown","data":{}}]},"events":[]}',
        b'{"table":{"a":1},"events":[{"id":2,"type":"back","data":{"seat":1}}],"seat":1}',
        b'{"a":{"b":1,"events":[{"id":2,"type":"showdown","data":{}}]},"c":2}',
    ],
)
def test_only_an_answers_own_events_get_lines(body: bytes) -> None:
    said = localise_body("hu", body)
    assert jsonio.loads(said) == localise(jsonio.loads(body), "hu")
    assert list(jsonio.loads(said)) == list(jsonio.loads(body))
    nested = jsonio.loads(said).get("table") or jsonio.loads(said).get("a") or {}
    assert all("line" not in event for event in nested.get("events", []))


@pytest.mark.parametrize(
    "refusal",
    [
        werkzeug.exceptions.BadRequest,
        werkzeug.exceptions.NotAcceptable,
        werkzeug.exceptions.UnsupportedMediaType,
    ],
)
@pytest.mark.parametrize("language", TRANSLATED)
def test_what_werkzeug_refuses_is_said_in_the_language_asked(
    refusal: type[werkzeug.exceptions.HTTPException], language: str
) -> None:
    error = problem_of(refusal(), "POST", "/v1/tables")
    english = problem_body(error, "/v1/tables", None)
    worded = problem_body(error, "/v1/tables", language)
    assert (worded["code"], worded["status"]) == (english["code"], english["status"])
    assert worded["detail"] == say(language, error.detail, {})
    assert worded["detail"] != english["detail"]


def test_a_fields_expected_type_is_said_in_the_language_asked() -> None:
    with pytest.raises(ApiError) as caught:
        parse_json_body(b'{"buy_in": "many"}', "application/json", "TakeSeat")
    english = problem_body(caught.value, "/", None)
    worded = problem_body(caught.value, "/", "hu")
    assert english["detail"] == "Field 'buy_in' must be an integer."
    assert worded["detail"] == "A(z) 'buy_in' mezőnek egész szám kell lennie."
    assert (worded["code"], worded["field"]) == ("invalid_type", "buy_in")
