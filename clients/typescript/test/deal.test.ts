/** Whole deals against a real gateway at CARDROOM_URL (started by the Python suite). */

import assert from "node:assert/strict";
import { test } from "node:test";

import { CardroomError, Client, type Event, type Seat } from "../src/index.js";

const URL = process.env.CARDROOM_URL;
if (URL === undefined) {
  throw new Error("set CARDROOM_URL to a running gateway");
}

async function player(name: string): Promise<Client> {
  const anonymous = new Client(URL);
  const created = await anonymous.createPlayer(name);
  return anonymous.withCredential(created.key);
}

async function refused(move: Promise<unknown>): Promise<CardroomError> {
  const error = await move.then(
    () => assert.fail("the move was accepted"),
    (failure: unknown) => failure,
  );
  assert.ok(error instanceof CardroomError);
  return error;
}

/** Events from the stream until one of `type` arrives. */
async function until(seat: Seat, type: string, after = 0): Promise<Event[]> {
  const seen: Event[] = [];
  const stream = seat.stream({ after, signal: AbortSignal.timeout(60_000) });
  for await (const event of stream) {
    seen.push(event);
    if (event.type === type) {
      stream.close();
    }
  }
  return seen;
}

test("a whole Guts deal", { timeout: 60_000 }, async () => {
  const ada = await player("Ada");
  const bo = await player("Bo");
  assert.equal((await ada.me()).name, "Ada");
  const { table, events: created } = await ada.createTable({ game: "guts", deal_pause_seconds: 60 });
  assert.deepEqual(created.map((event) => event.type), ["table_created"]);
  assert.equal(table.game, "guts");
  const one = await ada.takeSeat(table.id, 100);
  const two = await bo.takeSeat(table.id, 100);
  assert.notEqual(one.number, two.number);
  const stream = until(one, "showdown");

  // a refused move carries the problem type
  const early = await refused(two.declare("in"));
  assert.equal(early.status, 409);
  assert.match(early.code, /^[a-z_]+$/);
  assert.ok(early.title.length > 0 && early.detail.length > 0);
  assert.equal(early.instance, `/v1/tables/${table.id}/actions`);

  // the same Idempotency-Key sent again is answered with the first reply, applied once
  const key = crypto.randomUUID();
  const started = await one.start({ idempotencyKey: key });
  const again = await one.start({ idempotencyKey: key });
  assert.equal(started.replayed, false);
  assert.equal(again.replayed, true);
  assert.equal(again.table.version, started.table.version);
  assert.equal((await one.table()).version, started.table.version);
  assert.equal((await one.table()).you?.cards?.length, 3);

  await one.declare("in");
  const last = await two.declare("in");
  assert.ok(last.events.some((event) => event.type === "showdown"));
  const seen = await stream;
  const showdown = seen.find((event) => event.type === "showdown");
  assert.ok(showdown !== undefined);
  assert.deepEqual(
    seen.map((event) => event.id),
    [...seen.map((event) => event.id)].sort((a, b) => a - b),
  );

  const history = await ada.hand(table.id, 1);
  assert.equal(history.hand_number, 1);
  assert.ok(history.events.some((event) => event.type === "showdown"));
  assert.equal(history.fairness.leaves.length, 52);

  // the stream resumes after the last event seen
  const page = await one.events({ after: showdown.id - 1 });
  assert.equal(page.events[0]?.id, showdown.id);
  const held = await bo.mySeats();
  assert.deepEqual(held.map((seat) => seat.table_id), [table.id]);
  const ticket = await one.client.streamTicket(table.id, { token: one.token });
  assert.ok(ticket.ticket.length > 0);
  const left = await two.leave();
  assert.equal(left.seat, two.number);
  // every write to a table answers the table and the events of the change
  assert.equal(left.table.id, table.id);
  assert.ok(left.events.some((event) => event.type === "leaving" || event.type === "left"));
  assert.equal(one.granted?.table.id, table.id);
  assert.deepEqual(one.granted?.events.map((event) => event.type), ["seated"]);
});

test("a whole Paiute deal", { timeout: 120_000 }, async () => {
  const ada = await player("Ada");
  const bo = await player("Bo");
  const { table } = await ada.createTable({ game: "paiute", deal_pause_seconds: 60, max_reshuffles: 0 });
  const seats = [await ada.takeSeat(table.id, 100), await bo.takeSeat(table.id, 100)];
  const watcher = until(seats[0]!, "deal_ended");
  let state = (await seats[0]!.start()).table;
  const refusedCodes = new Set<string>();
  let moves = 0;
  let called = false;
  // each turn: draw from the stock, call with all six if they make a combination, else
  // discard the card drawn; after a call the later seats have their last turns
  while (state.phase !== "between_deals" && state.pending?.action === "draw") {
    const seat = seats.find((candidate) => candidate.number === state.pending?.seats[0]);
    assert.ok(seat !== undefined);
    const drew = await seat.draw("stock");
    state = drew.table;
    if (state.pending?.action !== "discard" && state.pending?.action !== "call") {
      // the stock ran out: the deal is void
      const privateCard = drew.events.find((event) => event.type === "drew_card");
      if (privateCard === undefined) {
        continue;
      }
    }
    const privateCard = drew.events.find((event) => event.type === "drew_card");
    assert.ok(privateCard !== undefined);
    const card = String(privateCard.data.card);
    const held = drew.table.you?.cards ?? [];
    const cards = held.includes(card) ? held : [...held, card];
    const drawn = { card };
    assert.equal(cards.length, 6);
    moves += 1;
    if (!called) {
      try {
        state = (await seat.call(cards, null)).table;
        called = true;
        continue;
      } catch (error) {
        assert.ok(error instanceof CardroomError);
        assert.equal(error.status, 422);
        refusedCodes.add(error.code);
      }
    }
    state = (await seat.discard(drawn.card)).table;
  }
  assert.ok(moves > 0);
  for (const code of refusedCodes) {
    assert.ok(["no_combination", "invalid_combination"].includes(code), code);
  }
  const seen = await watcher;
  assert.equal(seen.at(-1)?.type, "deal_ended");
  const history = await ada.hand(table.id, 1);
  assert.equal(history.hand_number, 1);
  assert.ok(history.events.some((event) => event.type === "drew"));
});

test("the lobby's filters and a quick seat", { timeout: 60_000 }, async () => {
  const host = await player("Host");
  const { table } = await host.createTable({ game: "guts", cards: 2, ante: 7, deal_pause_seconds: 60 });
  const filters = { game: "guts", cards: 2, ante_min: 7, ante_max: 7 } as const;
  // nobody sits there yet: only its creator finds it
  assert.deepEqual((await host.lobby(20, undefined, filters)).tables, []);
  const mine = await host.lobby(20, undefined, { ...filters, mine: "true" });
  assert.deepEqual(mine.tables.map((listed) => listed.id), [table.id]);
  await host.takeSeat(table.id, 140);
  const listed = await host.lobby(20, undefined, filters);
  assert.deepEqual(listed.tables.map((entry) => [entry.id, entry.seats_taken]), [[table.id, 1]]);
  const ada = await player("Ada");
  const seat = await ada.quickSeat({ game: "guts", cards: 2, ante: 7 }, 140);
  assert.equal(seat.tableId, table.id);
  assert.equal(seat.granted.created, false);
  const bo = await player("Bo");
  const other = await bo.quickSeat({ game: "paiute", ante: 7 }, 140);
  assert.equal(other.granted.created, true);
  assert.equal((await other.table()).game, "paiute");
});

test("a computer player seated and removed by the table's creator", { timeout: 60_000 }, async () => {
  const ada = await player("Ada");
  const { table } = await ada.createTable({ game: "paiute" });
  const seated = await ada.seatBot(table.id, { strategy: "easy", buy_in: 100 });
  assert.equal(seated.table.seats[String(seated.seat)]?.computer, "easy");
  const lobby = await ada.lobby(50);
  assert.equal(lobby.tables.find((listed) => listed.id === table.id)?.computer_players, 1);
  const stranger = await refused((await player("Bo")).seatBot(table.id, { strategy: "easy", buy_in: 100 }));
  assert.equal(stranger.code, "not_table_owner");
  const left = await ada.removeBot(table.id, seated.seat);
  assert.equal(left.left, true);
});

test("closing a table before its first deal", { timeout: 30_000 }, async () => {
  const host = await player("Host");
  const guest = await player("Guest");
  const { table } = await host.createTable({ game: "guts" });
  const seat = await guest.takeSeat(table.id, 100);
  const other = await refused(guest.closeTable(table.id));
  assert.equal(other.code, "not_table_creator");
  const closing = await host.closeTable(table.id);
  assert.equal(closing.closed, true);
  assert.ok(closing.events.some((event) => event.type === "table_closed"));
  const gone = await refused(seat.leave());
  assert.equal(gone.status, 410);
});

test("a player's limits", { timeout: 30_000 }, async () => {
  const ann = await player("Ann");
  const set = await ann.setMyLimit({ kind: "buy_in", window: "24h", amount: 150 });
  assert.equal(set.applied, true);
  const raised = await ann.setMyLimit({ kind: "buy_in", window: "24h", amount: 900 });
  assert.equal(raised.applied, false);
  const limit = (await ann.myLimits()).limits.find(
    (item) => item.kind === "buy_in" && item.window === "24h",
  );
  assert.equal(limit?.amount, 150);
  const early = await refused(ann.confirmMyLimit({ kind: "buy_in", window: "24h" }));
  assert.equal(early.code, "limit_cooling");
  const { table } = await ann.createTable({ game: "guts" });
  const past = await refused(ann.takeSeat(table.id, 200));
  assert.equal(past.code, "limit_reached");
});

test("a time-out", { timeout: 30_000 }, async () => {
  const kim = await player("Kim");
  assert.equal((await kim.myExclusion()).exclusion, null);
  const taken = await kim.exclude({ kind: "time_out", days: 2 });
  assert.equal(taken.exclusion.kind, "time_out");
  const { table } = await kim.createTable({ game: "guts" });
  const refusedSeat = await refused(kim.takeSeat(table.id, 100));
  assert.equal(refusedSeat.code, "player_excluded");
});

test("a player's deals", { timeout: 30_000 }, async () => {
  const lee = await player("Lee");
  const page = await lee.myDeals();
  assert.deepEqual(page.deals, []);
  const text = await lee.myDealsText(3);
  assert.equal(typeof text, "string");
});
