"""The operator's view of a player, for monitoring harm: their limits, their time-out or
self-exclusion, their wallet, and their activity per day (`api.service.activity`)."""

from __future__ import annotations

from api.adapters.wallets import Entry
from api.service import activity, exclusions
from api.service.player_limits import PlayerLimits
from api.service.recall import Recall
from api.service.wallets import WalletService

DAY = 86_400.0
# a seat bought this long before the window still counts its time inside it
SEAT_LOOKBACK = 7 * DAY
# the wallet entries read at most for one view
MAX_ENTRIES = 20_000


def overview(
    player: str,
    days: int,
    wallets: WalletService,
    limits: PlayerLimits,
    recall: Recall,
) -> dict[str, object]:
    """A player's limits, exclusion, balance and activity over their last `days` days."""
    now = limits.clock()
    since = (int(now // DAY) - days + 1) * DAY
    entries: list[Entry] = []
    cursor: int | None = None
    while len(entries) < MAX_ENTRIES:
        page, cursor = wallets.entries_page(player, cursor, 500)
        entries += page
        if cursor is None or (page and page[-1]["at"] < since - SEAT_LOOKBACK):
            break
    deals = []
    for member, ended in recall.store.page(player, None, 1000):
        if ended < since - SEAT_LOOKBACK:
            break
        deals.append((member.rpartition(":")[0], ended))
    exclusion = limits.exclusion(player)
    return {
        "player": player,
        **wallets.balance(player),
        "limits": limits.view(player)["limits"],
        "exclusion": exclusion,
        "excluded": exclusions.is_active(exclusion, now),
        "activity": activity.activity(entries, deals, since, now),
    }
