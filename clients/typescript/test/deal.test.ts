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
