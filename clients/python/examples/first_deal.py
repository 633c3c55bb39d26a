"""A first Guts deal through `cardroom_client`: two seats, a showdown, its fairness proof.

    python first_deal.py [http://127.0.0.1:8000]

ann and bo, two new players, each with a client sending their own key, sit down with 100
chips each at a three-card Guts table that ann creates; both go in, and the evaluator
settles the showdown. Each seat then reads the hand's history with its own token and
checks the fairness proof against the commitment announced before anyone acted and
against the cards it was dealt. Both leave. It prints what happened as JSON
(exit status 0), or the error (exit status 1).
"""

from __future__ import annotations

import json
import platform
import sys
from collections.abc import Sequence
from typing import Any

from cardroom_client import CardroomError, Client, GutsOptions, Seat, error_for, verify_fairness

BUY_IN = 100


def own_cards(seat: Seat) -> tuple[str, ...]:
    """The cards `seat` holds, as only it may see them."""
    you = seat.table().you
    if you is None or you.cards is None:
        raise RuntimeError(f"seat {seat.number} sees no cards of its own")
    return you.cards


def play(cardroom: Client) -> dict[str, Any]:
    """Play one deal to its settlement and check it; a summary of what happened."""
    # each player's client shares the anonymous one's connections
    ann_client = cardroom.with_credential(cardroom.create_player("ann").key)
    bo_client = cardroom.with_credential(cardroom.create_player("bo").key)
    options = GutsOptions(cards=3, ante=1, turn_seconds=120, deal_pause_seconds=60)
    table = ann_client.create_table(options, name="first deal")
    ann = ann_client.take_seat(table.id, None, BUY_IN)
    bo = bo_client.take_seat(table.id, None, BUY_IN)
    ann.start()
    view = cardroom.table(table.id)
    if view.deal is None:
        raise RuntimeError("the table started no deal")
    announced = view.deal.commitment  # published before anyone acted
    dealt = {seat.number: own_cards(seat) for seat in (ann, bo)}
    ann.declare("in")
    refused = ""
    try:
        ann.declare("out")  # a declaration is final
    except error_for("already_declared") as error:
        refused = error.code
    bo.declare("in")
    cursor, outcome = 0, None
    while outcome is None:  # long polls of up to 10 s until the deal is settled
        page = cardroom.events(table.id, after=cursor, wait=10)
        ends = [item for item in page.events if item.type == "deal_ended"]
        outcome = ends[0].data["outcome"] if ends else None
        cursor = page.next
    checks = {}
    for seat in (ann, bo):
        history = seat.hand(view.hand_number)
        report = verify_fairness(
            history, announced=announced, dealt={seat.number: dealt[seat.number]}
        )
        checks[seat.name] = list(report.checks)
    settled = cardroom.table(table.id)
    chips = sum(item.stack for item in settled.seats.values()) + settled.pot + settled.reserve
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "table": table.id,
        "hand_number": view.hand_number,
        "dealt": {str(number): list(cards) for number, cards in dealt.items()},
        "refused": refused,
        "outcome": outcome,
        "fairness": checks,
        "chips": chips,
        "cashed_out": {seat.name: seat.leave().cashed_out for seat in (ann, bo)},
    }


def main(argv: Sequence[str]) -> int:
    """Play against the gateway at argv[0] (default http://127.0.0.1:8000)."""
    url = argv[0] if argv else "http://127.0.0.1:8000"
    try:
        with Client(url) as cardroom:
            summary = play(cardroom)
    except (CardroomError, RuntimeError) as error:
        print(f"first deal failed: {error}", file=sys.stderr)
        return 1
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
