// One table, played through the public HTTP API as the signed-in player.
//
// The player's key (account.js) is the only credential the page keeps: on load it asks
// GET /v1/players/me/seats whether the player holds a seat here, which answers with the
// table as that seat sees it and the id of the last event it includes. From there the
// page follows the seat's private event stream: an EventSource cannot send an
// Authorization header, so each connection opens with a single-use ticket
// (POST .../stream-tickets, then .../events/stream?ticket=...&after=<last event id>).
// Each event is applied to the table the page shows (its own cards, a declaration, a
// card drawn, chips moved...); an event the page cannot apply exactly, or a gap, makes
// it read its seat again. A spectator follows the public stream and reads the table
// after the events.
import { currentPlayer, keyRefused, mountAccount, refreshBalance } from "./account.js";
import {
  api,
  cardBack,
  cardLabel,
  cardNode,
  cardWord,
  el,
  gutsName,
  listNames,
  ProblemError,
  showProblem,
} from "./cardroom.js";
import { mountCare } from "./care.js";
import { rankOf, rulesFor, wildNode } from "./rules.js";
import { bdi, browserLanguage, language, number, onLanguageChange, t, tn, translateStatic } from "./i18n.js";

const tableId = decodeURIComponent(window.location.pathname.split("/")[2] || "");
const tablePath = `/v1/tables/${encodeURIComponent(tableId)}`;
const SPECTATOR_POLL_MS = 15000;
const STREAM_RETRY_MS = 500;
const STREAM_RETRY_MAX_MS = 10000;
const LOG_LENGTH = 14;
// Every event type the gateway writes; EventSource delivers named events only to
// listeners of that name.
const EVENT_TYPES = [
  "table_created", "seated", "leaving", "left", "cashed_out", "rebought", "game_started",
  "game_ended", "deal_started", "ante", "ante_skipped", "cards_dealt", "dealt", "phase",
  "declared", "your_declaration", "declarations_revealed", "showdown", "pot_won", "pot_split",
  "paid", "wimp_paid", "deal_ended", "timeout", "wild_card", "discard_started", "turn",
  "turn_held", "drew", "drew_card", "discarded", "called", "laid_down", "reshuffled",
  "deal_void", "pot_carried", "reserve_opened", "message", "table_closed", "away", "back",
];
// Paiute deals five cards to each hand, one wild card and the pile's first card.
const PAIUTE_HAND = 5;
const PAIUTE_OFF_HANDS = 2;

// The table page's fixed words.
const WORDS = {
  // NOTE: the chips in the middle of the table that the deal's winner takes.
  pot: () => t("Pot"),
  // NOTE: heads the line saying what happens now at the table (whose turn, which phase).
  now: () => t("Now"),
  clock: () => t("Clock"),
  loading: () => t("Loading…"),
  "your-cards": () => t("Your cards"),
  "take-seat": () => t("Take a seat"),
  "seat-name": () => t("Name at this table"),
  "buy-in": () => t("Buy-in (chips)"),
  "sit-down": () => t("Sit down"),
  "away-title": () => t("You are away"),
  "away-text": () => t("You missed your last turns: you are not dealt in until you are back."),
  back: () => t("I'm back"),
  "out-of-chips": () => t("Out of chips"),
  "buy-more": () => t("Buy more (chips)"),
  rebuy: () => t("Rebuy"),
  players: () => t("Players"),
  // NOTE: heads the running account of what happened at the table.
  "at-the-table": () => t("At the table"),
  leave: () => t("Leave the table"),
  "all-tables": () => t("All tables"),
  // NOTE: heads the form with which a table's creator seats a player the computer plays.
  "computer-players": () => t("Computer players"),
  // NOTE: how well a computer player plays: Easy, Strong or Random (random legal moves).
  "bot-strategy": () => t("Strength"),
  "bot-easy": () => t("Easy"),
  "bot-strong": () => t("Strong"),
  "bot-random": () => t("Random"),
  "add-bot": () => t("Add a computer player"),
  // NOTE: names the bar with the pot, what happens now and the clock (for screen readers).
  "table-state": () => t("The table now"),
  // NOTE: the button that opens the list of keys; "?" is the key that opens it too.
  keys: () => t("Keys (?)"),
  "keys-title": () => t("Playing by keyboard"),
  close: () => t("Close"),
  // NOTE: opens the rules of the table's game, with this table's options.
  "how-to-play": () => t("How to play"),
  "leave-title": () => t("Leave the table?"),
  "leave-text": () => t("You are in this deal: you leave when it ends, and your chips are cashed out then."),
  "leave-anyway": () => t("Leave after this deal"),
  // NOTE: keeps the seat (the answer to "Leave the table?").
  stay: () => t("Stay"),
};

// Every move has a key. A key is known by its place on the keyboard (`event.code`), so
// "I" is the same key on every layout, Pashto's included; the help overlay (?) lists them.
const KEYS = [
  { codes: ["KeyS"], key: "S", action: "start", words: () => t("Start the game") },
  // NOTE: a key's use in the list of keys: Guts, go in (play for the pot).
  { codes: ["KeyI"], key: "I", action: "in", words: () => t("Guts: go in") },
  { codes: ["KeyO"], key: "O", action: "out", words: () => t("Guts: stay out") },
  { codes: ["KeyD"], key: "D", action: "draw-stock", words: () => t("Paiute: draw from the stock") },
  { codes: ["KeyT"], key: "T", action: "draw-discard", words: () => t("Paiute: take the top card of the discard pile") },
  // NOTE: "1–6" is written as the keys are: the digits one to six.
  { key: "1–6", words: () => t("Paiute: pick a card of your hand, or put it back (first to sixth)") },
  { codes: ["KeyB"], key: "B", action: "select-best", words: () => t("Paiute: pick the winning combination found") },
  { codes: ["KeyX"], key: "X", action: "discard", words: () => t("Paiute: discard the card picked") },
  { codes: ["KeyC"], key: "C", action: "call", words: () => t("Paiute: call, or lay down, with the cards picked") },
  { codes: ["KeyH"], key: "H", action: "how-to-play", words: () => t("Open or close How to play") },
  { key: "?", words: () => t("Show this list of keys") },
];
const KEY_OF = Object.fromEntries(KEYS.filter((entry) => entry.action).map((entry) => [entry.action, entry.key]));

// A computer player's strategy in words (its seat's badge).
const STRATEGIES = {
  easy: () => t("Easy"),
  strong: () => t("Strong"),
  random: () => t("Random"),
};

// A hand's rank in words, in the page's language. The API words the descriptions of its
// answers in the language the page asks for (Accept-Language, and `lang=` on the event
// stream, whose EventSource sends only the browser's own). After a switch of language
// the stream opened before it still speaks the old one: until it is opened again, the
// page asks POST /v1/evaluate, in its language, for the words of the hands it shows (one
// request for the hands of a showdown; a hand's words depend only on its cards, the game
// and the wild rank), and shows the stream's words until the answer comes.
const wordings = new Map();
let wordingQueued = null;

function described(description, cards, wildRank) {
  const streamWords = streamLanguage || browserLanguage();
  if (!description || !cards || !view || language() === streamWords) return description || "";
  const game = view.game === "guts" ? `guts${view.options.cards}` : "paiute";
  const wild = game !== "paiute" ? null : wildRank || (view.deal && view.deal.wild_rank);
  const key = [language(), game, wild, cards.join(" ")].join("|");
  if (wordings.has(key)) return wordings.get(key) || description;
  wordings.set(key, null);
  if (!wordingQueued) {
    wordingQueued = { game, wild, keys: [] };
    setTimeout(askWordings, 0);
  }
  if (wordingQueued.game === game && wordingQueued.wild === wild) wordingQueued.keys.push(key);
  else wordings.delete(key);
  return description;
}

async function askWordings() {
  const { game, wild, keys } = wordingQueued;
  wordingQueued = null;
  const hands = keys.map((key) => key.split("|")[3]);
  const body = { game, hands };
  if (game === "paiute") body.wild_rank = wild;
  try {
    const answer = await api("POST", "/v1/evaluate", { body });
    answer.results.forEach((result, i) => wordings.set(keys[i], result.description || null));
  } catch {
    // the stream's words stay
    return;
  }
  drawLog();
  render();
}

const $ = (id) => document.getElementById(id);
const root = $("table");
const problemBox = $("problem");

let player = currentPlayer();
// The seat the player holds here (a number), or null: a spectator.
let mySeat = null;
let view = null;
// The id of the last event `view` includes (seated only; null: not known).
let position = null;
let selected = new Set();
let selectionKey = "";
let hint = { key: "", result: null, cards: null };
let busy = false;
let gone = false;
let refreshedAtZero = 0;
// Reading the seat again: the promise, and the events that came meanwhile.
let resyncing = null;
let resyncAgain = false;
let held = [];
// The last reading of the seat failed: whether the player sits here is not known.
let unsure = false;
// A spectator's reads of the table.
let loading = null;
let again = false;
// The event stream: the EventSource, its kind ("seat" or "public"), a counter that
// retires the handlers of a replaced stream, and the failures in a row.
let stream = null;
let streamKind = null;
// The language the open stream words its events in (its `lang=`).
let streamLanguage = null;
let streamGeneration = 0;
let streamFailures = 0;
let streamTimer = null;
let lastSeen = 0;
let renderQueued = false;
const seatNames = {};
const logLines = [];
const account = mountAccount((signedIn) => {
  player = signedIn;
  resync();
});

function token() {
  return player ? player.key : undefined;
}

// --------------------------------------------------------------------- reading

function report(error, source) {
  problemBox.dataset.source = source;
  showProblem(problemBox, error);
}

function clearReport(source) {
  if (problemBox.dataset.source === source) showProblem(problemBox, null);
}

// The key was refused (revoked): say so, and carry on as a spectator.
function signedOut() {
  account.signedOut();
  player = null;
  report(new ProblemError(401, { code: "invalid_token" }), "account");
}

function tableGone() {
  gone = true;
  closeStream();
  root.setAttribute("aria-busy", "false");
  $("phase").textContent = t("No such table");
}

// Where the page stands: the player's seat here and the table as that seat sees it, with
// the id of its last event (one read, so the two agree); or the table as a spectator
// sees it. Then the stream that fits.
async function readSeat() {
  if (player) {
    try {
      const body = await api("GET", "/v1/players/me/seats", { token: token() });
      const entry = body.seats.find((item) => item.table_id === tableId);
      if (entry) {
        // A move's answer may have brought a newer table while this read was on its way.
        const newer = mySeat === entry.seat && position !== null && position > entry.last_event;
        if (!newer) {
          view = entry.table;
          position = entry.last_event;
        }
        mySeat = entry.seat;
        clearReport("load");
        return;
      }
    } catch (error) {
      if (!keyRefused(error)) throw error;
      signedOut();
    }
  }
  mySeat = null;
  position = null;
  view = await api("GET", tablePath, { token: token() });
  clearReport("load");
}

function resync() {
  if (resyncing) {
    resyncAgain = true;
    return resyncing;
  }
  resyncing = (async () => {
    do {
      resyncAgain = false;
      try {
        await readSeat();
        unsure = false;
      } catch (error) {
        unsure = true;
        report(error, "load");
        if (error instanceof ProblemError && error.code === "table_not_found") tableGone();
      }
    } while (resyncAgain);
    resyncing = null;
    const waiting = held;
    held = [];
    if (mySeat !== null) for (const item of waiting) applyOne(item);
    render();
    const kind = mySeat !== null ? "seat" : "public";
    if (!gone && (stream === null || streamKind !== kind) && streamTimer === null) openStream();
    if (mySeat !== null && lastSeen === 0) recentEvents();
  })();
  return resyncing;
}

// The last few events, for the account of the table a seated player sees on arrival
// (the seat's stream starts after the table the page read).
async function recentEvents() {
  try {
    const after = Math.max(0, position - LOG_LENGTH * 2);
    const body = await api("GET", `${tablePath}/events?after=${after}`, { token: token() });
    for (const item of body.events) {
      if (item.id > lastSeen) {
        lastSeen = item.id;
        logEvent(item);
      }
    }
  } catch {
    // the account is a convenience; the table itself is shown without it
  }
}

// A spectator reads the table again after events (the public stream says what changed
// only for what the public may see, and a spectator has no event id to start from).
async function refresh() {
  if (mySeat !== null || unsure) return resync();
  if (loading) {
    again = true;
    return loading;
  }
  loading = (async () => {
    do {
      again = false;
      try {
        const table = await api("GET", tablePath, { token: token() });
        if (mySeat === null && !resyncing) view = table;
        clearReport("load");
        render();
      } catch (error) {
        report(error, "load");
        if (error instanceof ProblemError && error.code === "table_not_found") tableGone();
      }
    } while (again);
    loading = null;
  })();
  return loading;
}

// A move's answer: the table after it, and the move's events (the last one's id says
// where that table stands). Older than what the stream brought already: ignored.
function acceptAnswer(table, events) {
  const ids = (events || []).map((item) => Number(item.id)).filter(Number.isInteger);
  if (!table || !ids.length) return;
  const last = Math.max(...ids);
  if (position !== null && last < position) return;
  view = table;
  position = last;
  render();
}

async function act(action, label) {
  if (busy || mySeat === null || !player) return;
  busy = true;
  render();
  try {
    const body = await api("POST", `${tablePath}/actions`, { body: action, token: token() });
    clearReport("act");
    acceptAnswer(body.table, body.events);
  } catch (error) {
    report(error, "act");
    if (keyRefused(error)) signedOut();
    resync();
  } finally {
    busy = false;
    if (label) selected = new Set();
    render();
  }
}

// --------------------------------------------------------------------- applying events

function seatRecord(table, seat) {
  return table.seats[String(seat)];
}

function pay(table, data, kind) {
  const record = seatRecord(table, data.seat);
  if (!record) return false;
  record.stack = data.stack;
  record.out_of_chips = data.stack === 0;
  table.pot += data.to_pot;
  table.reserve += data.to_reserve;
  if (table.deal) table.deal.flow.push({ kind, seat: data.seat, amount: data.amount, source: "seat", target: "pot" });
  return true;
}

// Chips from the pot to a seat: a win ("win"), or a share of an abandoned game's pot
// ("share"), as the gateway's own flow says.
function payOut(table, seat, amount, kind = "win") {
  const record = seatRecord(table, seat);
  if (!record) return false;
  record.stack += amount;
  record.out_of_chips = record.stack === 0;
  table.pot -= amount;
  if (table.deal) table.deal.flow.push({ kind, seat, amount, source: "pot", target: "seat" });
  return true;
}

function pendingFor(table) {
  const deal = table.deal;
  switch (table.phase) {
    case "declaring": {
      const seats = deal.turn !== null && deal.turn !== undefined
        ? [deal.turn]
        : deal.players.filter((seat) => !deal.declared.includes(seat));
      return { action: "declare", seats, deadline: table.deadline };
    }
    case "playing":
    case "last_turns":
      return { action: deal.drawn ? "discard_or_call" : "draw", seats: [deal.turn], deadline: table.deadline };
    case "showdown":
      return { action: "rank_hands", seats: [], deadline: null };
    case "between_deals":
      return { action: "next_deal", seats: [], deadline: table.deadline };
    default:
      return null;
  }
}

function declaredBy(table, seat, choice) {
  const deal = table.deal;
  if (!deal || !deal.players.includes(seat)) return false;
  if (!deal.declared.includes(seat)) {
    deal.declared = deal.players.filter((s) => s === seat || deal.declared.includes(s));
  }
  if (choice && table.options.declare === "sequential") deal.declarations[String(seat)] = choice;
  if (choice && seat === mySeat && table.you) table.you.declaration = choice;
  table.pending = pendingFor(table);
  return true;
}

// Apply one event to `table` (a copy of the view) exactly as the gateway's view would
// change; false when this page cannot (then it reads its seat again).
function applyEvent(table, item) {
  const d = item.data || {};
  const guts = table.game === "guts";
  const deal = table.deal;
  switch (item.type) {
    case "table_created":
    case "ante_skipped":
    case "message":
    case "turn_held":
      if (item.type === "turn_held") table.deadline = d.deadline;
      if (table.pending && item.type === "turn_held") table.pending.deadline = d.deadline;
      return true;
    case "seated":
      table.seats[String(d.seat)] = {
        seat: d.seat, name: d.name, stack: d.stack, status: d.status, leaving: false,
        out_of_chips: d.stack === 0, in_hand: false,
      };
      if (d.computer) table.seats[String(d.seat)].computer = d.computer;
      return true;
    case "leaving":
      if (!seatRecord(table, d.seat)) return false;
      seatRecord(table, d.seat).leaving = true;
      return true;
    case "away":
    case "back":
      if (!seatRecord(table, d.seat)) return false;
      seatRecord(table, d.seat).away = item.type === "away";
      return true;
    case "cashed_out":
      return Boolean(seatRecord(table, d.seat));
    case "left":
      // This player's own seat gone: the page reads where it stands now.
      if (d.seat === mySeat || !seatRecord(table, d.seat)) return false;
      delete table.seats[String(d.seat)];
      return true;
    case "rebought": {
      const record = seatRecord(table, d.seat);
      if (!record) return false;
      record.stack = d.stack;
      record.out_of_chips = d.stack === 0;
      return true;
    }
    case "game_ended":
      table.game_in_progress = false;
      return true;
    case "reserve_opened":
      table.pot = d.pot;
      table.reserve = d.reserve;
      return true;
    case "game_started":
      table.game_number = d.game_number;
      table.game_in_progress = true;
      for (const seat of d.players || []) if (seatRecord(table, seat)) seatRecord(table, seat).status = "playing";
      return true;
    case "deal_started": {
      if (guts !== ("ghost" in d)) return false;
      const names = {};
      for (const seat of d.players) {
        const record = seatRecord(table, seat);
        if (!record) return false;
        names[String(seat)] = record.name;
        record.status = "playing";
        record.in_hand = true;
      }
      const common = {
        number: d.hand_number, game_number: d.game_number, dealer: d.dealer,
        commitment: d.commitment, players: d.players.slice(), names, turn: null, timeouts: [],
        showdown: null, shown: {}, ranks: {}, pot_at_start: table.pot, flow: [], outcome: null,
        ended: false,
      };
      if (guts) {
        table.deal = {
          ...common, cards_per_hand: d.cards, ghost: d.ghost, declared: [], declarations: {},
        };
        if (mySeat !== null) table.you = { seat: mySeat, cards: null, declaration: null };
      } else {
        const hands = Object.fromEntries(d.players.map((seat) => [String(seat), 0]));
        table.deal = {
          ...common, wild_card: null, wild_rank: null, reshuffles: 0, caller: null,
          last_turns: [], claims: {}, discard_top: null, discard_size: 0,
          stock_size: 52 - PAIUTE_HAND * d.players.length - PAIUTE_OFF_HANDS,
          hand_sizes: hands, drawn: null,
        };
        if (mySeat !== null) table.you = { seat: mySeat, cards: null, drawn: null };
      }
      table.hand_number = d.hand_number;
      table.dealer = d.dealer;
      return true;
    }
    case "ante":
      return pay(table, d, "ante");
    case "paid":
      return pay(table, d, "paid");
    case "cards_dealt":
      if (!deal || d.seat !== mySeat) return false;
      table.you = guts
        ? { seat: mySeat, cards: d.cards.slice(), declaration: null }
        : { seat: mySeat, cards: d.cards.slice(), drawn: null };
      return true;
    case "dealt":
      if (!deal) return false;
      deal.pot_at_start = table.pot;
      if (!guts) for (const seat of d.players) deal.hand_sizes[String(seat)] = d.cards;
      return true;
    case "wild_card":
      if (guts || !deal) return false;
      deal.wild_card = d.card;
      deal.wild_rank = d.rank;
      return true;
    case "discard_started":
      if (guts || !deal) return false;
      deal.discard_top = d.card;
      deal.discard_size = 1;
      return true;
    case "phase":
      if (d.phase !== "waiting" && !deal) return false;
      table.phase = d.phase;
      table.deadline = d.deadline;
      if (d.phase === "waiting") {
        for (const record of Object.values(table.seats)) record.status = "waiting";
      }
      if (d.phase === "showdown") {
        deal.turn = null;
        if ("drawn" in deal) deal.drawn = null;
      }
      table.pending = pendingFor(table);
      return true;
    case "turn":
      if (!deal) return false;
      deal.turn = d.seat;
      table.deadline = d.deadline;
      if ("drawn" in deal) deal.drawn = null;
      if (table.you && "drawn" in table.you) table.you.drawn = null;
      table.pending = pendingFor(table);
      return true;
    case "declared":
      return guts && declaredBy(table, d.seat, d.choice);
    case "your_declaration":
      if (!guts || !deal || d.seat !== mySeat || !table.you) return false;
      table.you.declaration = d.choice;
      return true;
    case "timeout":
      if (!guts || !deal) return false;
      deal.timeouts.push(d.seat);
      return declaredBy(table, d.seat, d.result);
    case "declarations_revealed":
      if (!guts || !deal) return false;
      deal.declarations = { ...d.choices };
      deal.turn = null;
      return true;
    case "showdown":
      if (!deal) return false;
      deal.showdown = d.reason;
      for (const [key, hand] of Object.entries(d.hands || {})) {
        deal.shown[key] = hand.cards.slice();
        deal.ranks[key] = { strength: hand.strength, category: hand.category, description: hand.description };
      }
      return true;
    case "pot_won":
      if (!payOut(table, d.seat, d.amount)) return false;
      table.pot = d.pot;
      return true;
    case "pot_split": {
      // A tie splits the pot between winners; any other reason shares out an abandoned game's.
      const kind = d.reason === "tie" ? "win" : "share";
      for (const share of d.shares || []) if (!payOut(table, share.seat, share.amount, kind)) return false;
      table.pot = d.pot;
      return true;
    }
    case "deal_ended":
      if (!deal) return false;
      deal.outcome = d.outcome;
      deal.turn = null;
      deal.ended = true;
      if ("drawn" in deal) deal.drawn = null;
      if (table.you && "drawn" in table.you) table.you.drawn = null;
      table.pot = d.pot;
      table.reserve = d.reserve;
      for (const record of Object.values(table.seats)) record.in_hand = false;
      return true;
    case "drew": {
      if (guts || !deal) return false;
      const key = String(d.seat);
      if (d.source === "stock") {
        if (deal.stock_size < 1) return false;
        deal.stock_size -= 1;
        deal.drawn = { seat: d.seat, source: "stock", card: null };
      } else {
        // The card under the one taken is known only if the stream showed the pile grow.
        if (deal.discard_top !== d.card || !("uncovered" in item)) return false;
        deal.discard_top = item.uncovered;
        deal.discard_size -= 1;
        deal.drawn = { seat: d.seat, source: "discard", card: d.card };
        if (d.seat === mySeat) {
          if (!table.you || !table.you.cards) return false;
          table.you.cards.push(d.card);
          table.you.drawn = { card: d.card, source: "discard" };
        }
      }
      deal.hand_sizes[key] = (deal.hand_sizes[key] || 0) + 1;
      table.pending = pendingFor(table);
      return true;
    }
    case "called":
    case "laid_down": {
      if (guts || !deal) return false;
      const key = String(d.seat);
      deal.claims[key] = { cards: d.cards.slice(), discard: d.discard, category: d.category, description: d.description };
      deal.shown[key] = d.cards.slice();
      deal.hand_sizes[key] = d.cards.length;
      deal.drawn = null;
      if (d.discard !== null && d.discard !== undefined) {
        deal.discard_top = d.discard;
        deal.discard_size += 1;
      }
      if (deal.caller === null) {
        deal.caller = d.seat;
        deal.last_turns = deal.players.slice(deal.players.indexOf(d.seat) + 1);
      }
      if (d.seat === mySeat && table.you) {
        table.you.cards = d.cards.slice();
        table.you.drawn = null;
      }
      table.pending = pendingFor(table);
      return true;
    }
    case "reshuffled":
      if (guts || !deal || !deal.discard_top) return false;
      deal.reshuffles = d.number;
      deal.stock_size = d.stock;
      deal.discard_size = 1;
      return true;
    case "deal_void":
      if (guts || !deal) return false;
      deal.drawn = null;
      deal.reshuffles = d.reshuffles;
      return true;
    case "pot_carried":
      table.pot = d.pot;
      return true;
    case "drew_card":
      if (guts || !deal || d.seat !== mySeat || !table.you || !table.you.cards) return false;
      if (!table.you.cards.includes(d.card)) table.you.cards.push(d.card);
      table.you.drawn = { card: d.card, source: "stock" };
      return true;
    case "discarded": {
      if (guts || !deal) return false;
      const key = String(d.seat);
      deal.discard_top = d.card;
      deal.discard_size += 1;
      deal.hand_sizes[key] = Math.max(0, (deal.hand_sizes[key] || 0) - 1);
      deal.drawn = null;
      if (d.seat === mySeat && table.you && table.you.cards) {
        table.you.cards = table.you.cards.filter((code) => code !== d.card);
        table.you.drawn = null;
      }
      table.pending = pendingFor(table);
      return true;
    }
    default:
      return false;
  }
}

function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  setTimeout(() => {
    renderQueued = false;
    render();
  }, 0);
}

function applyOne(item) {
  if (position !== null && item.id <= position) return;
  if (!view || position === null) {
    resync();
    return;
  }
  // The seat's stream brings every event the seat may see, in order: an id skipped is
  // another seat's private event, never one of this seat's.
  const next = structuredClone(view);
  if (applyEvent(next, item)) {
    view = next;
    position = item.id;
    scheduleRender();
  } else {
    resync();
  }
}

// --------------------------------------------------------------------- live updates

function closeStream() {
  streamGeneration += 1;
  if (stream) stream.close();
  stream = null;
  streamKind = null;
}

function retryStream() {
  closeStream();
  streamFailures += 1;
  const wait = Math.min(STREAM_RETRY_MAX_MS, STREAM_RETRY_MS * 2 ** (streamFailures - 1));
  clearTimeout(streamTimer);
  streamTimer = setTimeout(() => {
    streamTimer = null;
    openStream();
  }, wait);
}

async function openStream() {
  closeStream();
  if (gone) return;
  const generation = streamGeneration;
  const words = language();
  let url = `${tablePath}/events/stream?after=${lastSeen}&lang=${words}`;
  const kind = mySeat !== null && player ? "seat" : "public";
  if (kind === "seat" && position === null) {
    resync();
    return;
  }
  // The pile stays known only if this stream starts where the last one's events ended.
  if (kind !== "seat" || position > pileAt) pile = null;
  if (kind === "seat") {
    // A ticket opens one connection: every (re)connection gets a new one.
    let ticket;
    try {
      ticket = await api("POST", `${tablePath}/stream-tickets`, { token: token() });
    } catch (error) {
      if (generation !== streamGeneration) return;
      if (keyRefused(error)) signedOut();
      if (error instanceof ProblemError && error.status < 500 && error.code !== "rate_limited") resync();
      retryStream();
      return;
    }
    if (generation !== streamGeneration) return;
    url = `${tablePath}/events/stream?ticket=${encodeURIComponent(ticket.ticket)}&after=${position}&lang=${words}`;
  }
  const source = new EventSource(url);
  stream = source;
  streamLanguage = words;
  streamKind = kind;
  source.addEventListener("open", () => {
    if (generation === streamGeneration) streamFailures = 0;
  });
  // The connection broke, the stream reached its end, or the ticket was refused: the
  // page reconnects itself, with a new ticket, from the last event it applied.
  source.addEventListener("error", () => {
    if (generation === streamGeneration) retryStream();
  });
  const onEvent = (message) => {
    if (generation !== streamGeneration) return;
    let item;
    try {
      item = JSON.parse(message.data);
    } catch {
      resync();
      return;
    }
    received(item);
  };
  for (const type of EVENT_TYPES) source.addEventListener(type, onEvent);
  source.addEventListener("history_trimmed", () => {
    if (generation !== streamGeneration) return;
    // The events since the last one seen are gone: start again from the table itself.
    lastSeen = 0;
    position = null;
    closeStream();
    resync();
  });
}

// The discard pile of this deal as this stream has shown it, card by card (null: not
// known; the table itself shows only the top). Events that take the top card off are
// marked with the card they uncover.
let pile = null;
let pileAt = 0;

function trackPile(item) {
  if (item.id <= pileAt) return;
  pileAt = item.id;
  const d = item.data || {};
  switch (item.type) {
    case "deal_started":
      pile = null;
      break;
    case "discard_started":
      pile = [d.card];
      break;
    case "discarded":
      if (pile) pile.push(d.card);
      break;
    case "called":
    case "laid_down":
      if (pile && d.discard !== null && d.discard !== undefined) pile.push(d.discard);
      break;
    case "reshuffled":
      pile = pile && pile.length ? pile.slice(-1) : null;
      break;
    case "drew":
      if (d.source !== "discard") break;
      if (pile && pile[pile.length - 1] === d.card) {
        pile.pop();
        item.uncovered = pile.length ? pile[pile.length - 1] : null;
      } else {
        pile = null;
      }
      break;
    default:
      break;
  }
}

function received(item) {
  trackPile(item);
  if (item.id > lastSeen) {
    lastSeen = item.id;
    logEvent(item, true);
  }
  if (item.type === "table_closed") {
    resync();
    return;
  }
  if (streamKind !== "seat") {
    // A seat taken from another device with this player's key: follow it from here too.
    if (player && item.type === "seated") resync();
    else refresh();
    return;
  }
  if (resyncing) {
    held.push(item);
    return;
  }
  applyOne(item);
}

// --------------------------------------------------------------------- names and words

function nameOf(seat) {
  const key = String(seat);
  if (key === "ghost") return t("The ghost");
  if (view && view.seats[key]) return view.seats[key].name;
  if (view && view.deal && view.deal.names && view.deal.names[key]) return view.deal.names[key];
  return seatNames[key] || t("Seat {seat}", { seat: Number(key) });
}

// A seat's name as a node of the sentence it is in, set apart from the words around it.
function nameNode(seat) {
  return bdi(nameOf(seat));
}

function isMine(seat) {
  return mySeat !== null && Number(seat) === mySeat;
}

function pendingSeats() {
  return (view && view.pending && view.pending.seats) || [];
}

function myTurn() {
  return mySeat !== null && pendingSeats().includes(mySeat);
}

// Which cards are wild, in words: "Sevens are wild".
function wildWords(rank) {
  switch (rank) {
    case 11: return t("Jacks are wild");
    case 12: return t("Queens are wild");
    case 13: return t("Kings are wild");
    case 14: return t("Aces are wild");
    // NOTE: {rank} is a number from 2 to 10: "7s are wild".
    default: return t("{rank}s are wild", { rank });
  }
}

// Whether a card is wild in this Paiute deal (every card of the turned-up card's rank).
function isWild(code) {
  return view.game === "paiute" && Boolean(view.deal) && view.deal.wild_rank === rankOf(code);
}

// A shown hand's wild cards, said beside its rank: "7s are wild: 7♥ 7♣".
function wildNote(cards) {
  const wild = cards.filter(isWild);
  if (!wild.length) return null;
  return el("span", { class: "wild-note" }, [
    `${wildWords(view.deal.wild_rank)}: `,
    el("span", { attrs: { dir: "ltr" }, text: wild.map(cardLabel).join(" ") }),
  ]);
}

// The rules of the table's game, drawn again only when they would read otherwise.
let rulesShown = "";

function renderRules() {
  const panel = $("how-to-play");
  const key = [language(), view.game, JSON.stringify(view.options), view.deal && view.deal.wild_card].join("|");
  if (key === rulesShown) return;
  // Open for a newcomer who has not sat down yet; as the player left it after that.
  if (!rulesShown && mySeat === null) panel.open = true;
  rulesShown = key;
  $("rules-title").textContent = view.game === "guts"
    ? t("How to play {game}", { game: gutsName(view.options.cards) })
    : t("How to play {game}", { game: t("Paiute") });
  $("rules-body").replaceChildren(...rulesFor(view));
}

function phaseText() {
  const pending = view.pending;
  const seatCount = Object.keys(view.seats).length;
  const draw = pending && pending.action === "draw";
  const last = view.phase === "last_turns";
  switch (view.phase) {
    case "waiting": {
      const least = view.options.min_players;
      if (seatCount < least) {
        return tn("Waiting for players: {n} seated, {least} needed", "Waiting for players: {n} seated, {least} needed",
          seatCount, { least });
      }
      return t("Ready: any seated player may start the game");
    }
    case "declaring": {
      if (myTurn()) return t("Your call: in or out?");
      const names = listNames(pendingSeats().map(nameOf));
      if (view.options.declare === "sequential") return t("{names} to declare", { names });
      return t("Waiting for {names} to declare", { names });
    }
    case "playing":
    case "last_turns": {
      if (myTurn()) {
        if (last) return draw ? t("Last turns: Your turn: draw") : t("Last turns: Your turn: discard or call");
        return draw ? t("Your turn: draw") : t("Your turn: discard or call");
      }
      const name = nameNode(view.deal.turn);
      if (last) return draw ? t("Last turns: {name} to draw", { name }) : t("Last turns: {name} to discard or call", { name });
      return draw ? t("{name} to draw", { name }) : t("{name} to discard or call", { name });
    }
    case "showdown":
      return t("Showdown: ranking the hands…");
    case "between_deals":
      // A win that empties the pot ends a game, and play goes on with a new one.
      return view.game_in_progress ? t("Next deal soon") : t("Next deal soon: the pot was won, a new game starts");
    default:
      return view.phase;
  }
}

// One line of the account of the table (a string or nodes), or null for none.
function describeEvent(item) {
  const d = item.data || {};
  const name = () => nameNode(d.seat);
  const n = d.amount;
  switch (item.type) {
    case "table_created":
      return t("The table opened");
    case "seated":
      return tn("{name} sat down with {n} chip", "{name} sat down with {n} chips", d.stack, { name: bdi(d.name) });
    case "leaving":
      return t("{name} leaves after this deal", { name: name() });
    case "away":
      return t("{name} is away: not dealt in until back", { name: name() });
    case "back":
      return t("{name} is back", { name: name() });
    case "left":
      return t("{name} left the table", { name: name() });
    case "cashed_out":
      return tn("{name} cashed out {n} chip", "{name} cashed out {n} chips", n, { name: name() });
    case "rebought":
      return tn("{name} bought {n} chip more", "{name} bought {n} chips more", n, { name: name() });
    case "game_started":
      return t("Game {number} starts", { number: d.game_number });
    case "game_ended":
      return t("Game {number} is over", { number: d.game_number });
    case "deal_started":
      return t("Deal {number}: {name} deals", { number: d.hand_number, name: nameNode(d.dealer) });
    case "ante":
      return n ? tn("{name} antes {n} chip", "{name} antes {n} chips", n, { name: name() }) : null;
    case "ante_skipped":
      return t("{name} skips the ante", { name: name() });
    case "declared":
      return t("{name} has decided", { name: name() });
    case "declarations_revealed": {
      const ins = Object.entries(d.choices || {}).filter(([, c]) => c === "in").map(([s]) => nameOf(s));
      return ins.length ? t("In: {names}", { names: listNames(ins) }) : t("Nobody went in");
    }
    case "showdown":
      return t("Showdown");
    case "pot_won":
      return tn("{name} wins {n} chip", "{name} wins {n} chips", n, { name: name() });
    case "pot_split": {
      const names = listNames((d.shares || []).map((share) => nameOf(share.seat)));
      if (d.reason === "tie") return t("{names} split the pot", { names });
      // NOTE: a game stopped (its players left, or too few hold chips): the pot is shared out.
      return t("The game was abandoned: the pot goes back to {names}", { names });
    }
    case "paid":
      return tn("{name} pays {n} chip", "{name} pays {n} chips", n, { name: name() });
    case "wimp_paid":
      // NOTE: "wimp" is the Guts rule by which the best hand pays when nobody went in.
      return tn("{name} had the best hand and pays {n} chip (wimp)", "{name} had the best hand and pays {n} chips (wimp)",
        n, { name: name() });
    case "timeout":
      return t("{name} ran out of time", { name: name() });
    case "turn_held":
      return t("{name}'s call waits for the hand evaluator: the turn is held open", { name: name() });
    case "wild_card":
      return t("Wild card: {card} ({wild})", { card: cardWord(d.card), wild: wildWords(d.rank) });
    case "drew":
      return d.card
        ? t("{name} took {card} from the pile", { name: name(), card: cardWord(d.card) })
        : t("{name} drew from the stock", { name: name() });
    case "discarded":
      return t("{name} discarded {card}", { name: name(), card: cardWord(d.card) });
    case "called":
      // NOTE: {hand} is the hand's rank in words, e.g. "Four eights and two aces".
      return withWild(t("{name} calls with {hand}", { name: name(), hand: described(d.description, d.cards, item.wildRank) }),
        d.cards, item.wildRank);
    case "laid_down":
      return withWild(t("{name} lays down {hand}", { name: name(), hand: described(d.description, d.cards, item.wildRank) }),
        d.cards, item.wildRank);
    case "reshuffled":
      return t("The discards were shuffled into a new stock");
    case "deal_void":
      return t("No call: the deal is void");
    case "pot_carried":
      return tn("The pot of {n} chip carries over", "The pot of {n} chips carries over", d.pot);
    default:
      return null;
  }
}

// A shown hand's line, saying which rank is wild when the hand holds one.
function withWild(line, cards, wildRank) {
  if (!wildRank || !(cards || []).some((code) => rankOf(code) === wildRank)) return line;
  return el("span", {}, [line, ` (${wildWords(wildRank)})`]);
}

function logEvent(item, live = false) {
  if (item.type === "seated") seatNames[String(item.data.seat)] = item.data.name;
  // the wild rank of the deal a call was made in, for its words in another language
  if (view && view.deal) item.wildRank = view.deal.wild_rank;
  const line = describeEvent(item);
  if (!line) return;
  // The deal's result is said once, in its headline.
  if (live && !SAID_IN_HEADLINE.has(item.type)) announce(line);
  logLines.push(item);
  while (logLines.length > LOG_LENGTH) logLines.shift();
  drawLog();
}

function drawLog() {
  $("log").replaceChildren(...logLines.slice().reverse().map((item) => el("li", {}, [describeEvent(item)])));
}

// --------------------------------------------------------------------- chips moved

function dealMoney(deal) {
  const won = {};
  const paid = {};
  const shared = {};
  for (const move of deal.flow || []) {
    if (move.seat === null || move.seat === undefined) continue;
    const key = String(move.seat);
    const into = move.kind === "share" ? shared : won;
    if (move.source === "pot" && move.target === "seat") into[key] = (into[key] || 0) + move.amount;
    if (move.source === "seat" && move.kind !== "ante") paid[key] = (paid[key] || 0) + move.amount;
  }
  return { won, paid, shared };
}

// The deal's outcome in sentences (nodes: the names are set apart).
function headline(deal) {
  const { won, paid, shared } = dealMoney(deal);
  const winners = Object.keys(won);
  const parts = [];
  // The dealer called: nobody is left to take a last turn, and the deal ends at once.
  if (deal.caller !== null && deal.caller !== undefined && deal.caller === deal.dealer) {
    parts.push(t("{name} called as the dealer: nobody gets a last turn, the deal ends.", { name: nameNode(deal.caller) }));
  }
  if (winners.length === 1) {
    const amount = won[winners[0]];
    parts.push(tn("{name} wins {n} chip.", "{name} wins {n} chips.", amount, { name: nameNode(winners[0]) }));
  } else if (winners.length > 1) {
    const shares = listNames(winners.map(nameOf));
    const each = winners.map((seat) => `${nameOf(seat)} ${number(won[seat])}`).join(", ");
    parts.push(t("{names} split the pot ({shares}).", { names: shares, shares: each }));
  } else if (deal.outcome === "nobody_in") {
    parts.push(t("Nobody went in: the pot stays for the next deal."));
  } else if (deal.outcome === "void") {
    parts.push(t("No call before the stock ran out: the deal is void and the pot carries over."));
  } else {
    parts.push(t("Nobody wins this deal."));
  }
  for (const [seat, amount] of Object.entries(paid)) {
    parts.push(tn("{name} pays {n} chip.", "{name} pays {n} chips.", amount, { name: nameNode(seat) }));
  }
  const sharers = Object.keys(shared);
  if (sharers.length) {
    const each = sharers.map((seat) => `${nameOf(seat)} ${number(shared[seat])}`).join(", ");
    parts.push(t("The game was abandoned: its pot goes back to the players ({shares}).", { shares: each }));
  }
  return parts.flatMap((part, i) => (i ? [" ", part] : [part]));
}

// --------------------------------------------------------------------- drawing

function render() {
  if (!view) return;
  // The last event the page shows the table after (the tests wait for it).
  root.dataset.event = String(mySeat !== null && position !== null ? position : lastSeen);
  root.dataset.phase = view.phase;
  root.dataset.hand = String(view.hand_number);
  root.dataset.seat = mySeat !== null ? String(mySeat) : "";
  root.setAttribute("aria-busy", "false");
  document.title = `${view.name} · cardroom`;
  $("table-name").textContent = view.name;
  const game = $("game");
  game.textContent = view.game === "guts" ? gutsName(view.options.cards) : t("Paiute");
  game.className = `tag ${view.game}`;
  $("pot").textContent = view.reserve
    ? t("{pot} (+{reserve} reserve)", { pot: view.pot, reserve: view.reserve })
    : number(view.pot);
  const now = phaseText();
  $("phase").replaceChildren(now);
  announceChange("phase", $("phase").textContent);
  $("status").classList.toggle("mine", myTurn());
  renderRules();
  renderBoard();
  renderSeats();
  renderHand();
  renderResult();
  renderForms();
  moveChips();
  tick();
  keepFocus();
  // The first drawing of the table with its data (docs/table-page.md measures it).
  if (!performance.getEntriesByName("cardroom:table-drawn").length) performance.mark("cardroom:table-drawn");
}

function renderBoard() {
  const board = $("board");
  const deal = view.deal;
  if (view.game !== "paiute" || !deal || deal.ended) {
    board.hidden = true;
    board.replaceChildren();
    return;
  }
  board.hidden = false;
  board.replaceChildren(
    el("div", { class: "pile" }, [
      // NOTE: the card whose rank is wild in this Paiute deal.
      el("span", { class: "label", text: t("Wild") }),
      cardNode(deal.wild_card, "span", { class: "wild" }),
      el("span", { class: "muted", text: wildWords(deal.wild_rank) }),
    ]),
    el("div", { class: "pile" }, [
      el("span", { class: "label", text: t("Discard pile") }),
      deal.discard_top ? wildNode(deal.discard_top, isWild(deal.discard_top)) : el("span", { class: "card empty", text: "–" }),
      el("span", { class: "muted", text: tn("{n} card", "{n} cards", deal.discard_size) }),
    ]),
    el("div", { class: "pile" }, [
      // NOTE: the face-down cards players draw from.
      el("span", { class: "label", text: t("Stock") }),
      cardBack(),
      el("span", { class: "muted", text: tn("{n} left", "{n} left", deal.stock_size) }),
    ]),
  );
}

function seatBadges(seat, record) {
  const deal = view.deal;
  const key = String(seat);
  const badges = [];
  if (isMine(seat)) badges.push(["you", t("You")]);
  if (record.computer) {
    const strategy = STRATEGIES[record.computer] ? STRATEGIES[record.computer]() : record.computer;
    // NOTE: marks a seat the computer plays, with its strength: "Computer · Strong".
    badges.push(["computer", t("Computer · {strategy}", { strategy })]);
  }
  if (view.dealer === seat && view.game_in_progress) badges.push(["dealer", t("Dealer")]);
  if (pendingSeats().includes(seat)) badges.push(["turn", view.phase === "declaring" ? t("Deciding") : t("To play")]);
  if (deal && deal.players.includes(seat)) {
    const choice = deal.declarations && deal.declarations[key];
    // NOTE: a Guts player's declaration: in (plays for the pot) or out (drops the hand).
    if (choice) badges.push([choice, choice === "in" ? t("In") : t("Out")]);
    else if (deal.declared && deal.declared.includes(seat) && !deal.ended) badges.push(["declared", t("Decided")]);
    // NOTE: a Paiute player who called: showed a winning hand, the others get a last turn.
    if (deal.caller === seat) badges.push(["in", t("Called")]);
  }
  if (record.status === "waiting") badges.push(["muted", t("Next game")]);
  if (record.leaving) badges.push(["muted", t("Leaving")]);
  if (record.away) badges.push(["muted", t("Away")]);
  if (record.out_of_chips) badges.push(["out", t("No chips")]);
  return badges.map(([kind, text]) => el("span", { class: `badge ${kind}`, text }));
}

function renderSeats() {
  const deal = view.deal;
  const money = deal && deal.ended ? dealMoney(deal) : { won: {}, paid: {}, shared: {} };
  const records = Object.values(view.seats).sort((a, b) => a.seat - b.seat);
  const items = records.map((record) => {
    const seat = record.seat;
    const key = String(seat);
    let hidden = null;
    if (deal && !deal.ended && record.in_hand && !isMine(seat) && !(deal.shown && deal.shown[key])) {
      const count = view.game === "guts" ? deal.cards_per_hand : (deal.hand_sizes || {})[key] || 0;
      const face = tn("{n} card face down", "{n} cards face down", count);
      // The cards fly in once, when they are dealt.
      const fresh = backsDealt[key] !== deal.number;
      backsDealt[key] = deal.number;
      hidden = el("span", { class: `backs${fresh ? " dealt" : ""}`, attrs: { "aria-label": face, role: "img" } },
        Array.from({ length: count }, () => cardBack()));
    }
    let change = null;
    const delta = (money.won[key] || 0) + (money.shared[key] || 0) - (money.paid[key] || 0);
    if (delta) {
      change = el("span", {
        class: `delta ${delta > 0 ? "up" : "down"}`, attrs: { dir: "ltr" },
        text: delta > 0 ? `+${number(delta)}` : `−${number(-delta)}`,
      });
    }
    const classes = ["seat"];
    if (isMine(seat)) classes.push("me");
    if (pendingSeats().includes(seat)) classes.push("turn");
    let remove = null;
    if (record.computer && view.created_by_you && !record.leaving) {
      remove = button(t("Remove"), "secondary small", () => removeBot(seat));
      remove.setAttribute("aria-label", t("Remove {name}", { name: record.name }));
      remove.dataset.removeBot = key;
    }
    const disc = view.dealer === seat && view.game_in_progress
      ? el("span", { class: "dealer-button", attrs: { "aria-hidden": "true" }, text: t("Dealer").slice(0, 1) })
      : null;
    return el("li", { class: classes.join(" "), attrs: { "data-seat": key } }, [
      disc,
      el("div", { class: "who" }, [
        el("bdi", { class: "name", text: record.name }),
        el("span", { class: "badges" }, seatBadges(seat, record)),
      ]),
      hidden,
      remove,
      el("div", { class: "stack" }, [
        el("span", { class: "chips", attrs: { "data-stack": record.stack, dir: "ltr" }, text: number(record.stack) }),
        change,
      ]),
    ]);
  });
  placeSeats(items, records);
  $("seats").replaceChildren(...items);
  if (!items.length) $("seats").replaceChildren(el("li", { class: "muted", text: t("Nobody is seated yet.") }));
  $("felt-pot").textContent = number(view.pot);
}

// --------------------------------------------------------------------- the table's motion

// Where each seat sits around the felt: the player's own at the bottom, the others
// clockwise from it in the order of play (a seat's left is the next seat number up).
// The style sheet turns the seat's point on a circle (--x, --y) into a place on the oval.
function placeSeats(items, records) {
  const count = records.length;
  const mine = records.findIndex((record) => isMine(record.seat));
  const first = mine >= 0 ? mine : 0;
  records.forEach((record, i) => {
    const angle = Math.PI / 2 + (2 * Math.PI * ((i - first + count) % count)) / count;
    items[i].style.setProperty("--x", Math.cos(angle).toFixed(3));
    items[i].style.setProperty("--y", Math.sin(angle).toFixed(3));
  });
  $("seats").style.setProperty("--count", String(count));
}

// The deal each seat's face-down cards were last drawn for (they fly in once).
const backsDealt = {};
// My own cards already shown, by deal: a new one flies in.
let cardsShown = "";
const still = window.matchMedia("(prefers-reduced-motion: reduce)");
// What the seats and the pot held at the last drawing.
let chipsShown = null;

// Chips that moved since the last drawing fly between the seat and the pot: into the
// pot for an ante or a payment, out of it to a winner. None with reduced motion.
function moveChips() {
  const now = { pot: view.pot, stacks: Object.fromEntries(Object.values(view.seats).map((r) => [r.seat, r.stack])) };
  const before = chipsShown;
  chipsShown = now;
  if (!before || still.matches || before.pot === now.pot) return;
  const pot = $("felt-pot");
  for (const [seat, stack] of Object.entries(now.stacks)) {
    const change = stack - (before.stacks[seat] ?? stack);
    if (!change || Math.sign(change) === Math.sign(now.pot - before.pot)) continue;
    const place = $("seats").querySelector(`li.seat[data-seat="${seat}"] .chips`);
    if (place) flyChip(change < 0 ? place : pot, change < 0 ? pot : place);
  }
}

function flyChip(from, to) {
  const start = from.getBoundingClientRect();
  const end = to.getBoundingClientRect();
  if (!start.width || !end.width) return;
  const chip = el("span", { class: "chip-fly", attrs: { "aria-hidden": "true" } });
  chip.style.left = `${start.left + start.width / 2}px`;
  chip.style.top = `${start.top + start.height / 2}px`;
  document.body.append(chip);
  const dx = end.left + end.width / 2 - (start.left + start.width / 2);
  const dy = end.top + end.height / 2 - (start.top + start.height / 2);
  const flight = chip.animate(
    [{ transform: "translate(-50%, -50%)" }, { transform: `translate(calc(${dx}px - 50%), calc(${dy}px - 50%))` }],
    { duration: 450, easing: "ease-in-out" },
  );
  flight.finished.then(() => chip.remove(), () => chip.remove());
}

function pickable() {
  return view.game === "paiute" && myTurn() && view.pending.action === "discard_or_call";
}

function renderHand() {
  const section = $("hand");
  const you = view.you;
  const cards = (you && you.cards) || [];
  const showHand = mySeat !== null && (cards.length > 0 || myTurn() || view.phase === "waiting");
  section.hidden = !showHand;
  const key = `${view.hand_number}:${cards.join(",")}`;
  if (key !== selectionKey) {
    selectionKey = key;
    selected = new Set();
  }
  const drawn = you && you.drawn ? you.drawn : null;
  const canPick = pickable();
  const before = cardsShown.startsWith(`${view.hand_number}:`) ? cardsShown.split(":")[1].split(",") : [];
  cardsShown = `${view.hand_number}:${cards.join(",")}`;
  const nodes = cards.map((code, i) => {
    if (!canPick) return wildNode(code, isWild(code), "span", { class: drawn && drawn.card === code ? "drawn" : "" });
    const chosen = selected.has(code);
    return wildNode(code, isWild(code), "button", {
      class: `pick${chosen ? " selected" : ""}${drawn && drawn.card === code ? " drawn" : ""}`,
      attrs: { type: "button", "aria-pressed": chosen ? "true" : "false", "aria-keyshortcuts": String(i + 1) },
      on: {
        click: () => {
          if (selected.has(code)) selected.delete(code);
          else selected.add(code);
          render();
        },
      },
    });
  });
  nodes.forEach((node, i) => {
    if (!before.includes(cards[i])) node.classList.add("dealt");
  });
  $("my-cards").replaceChildren(...nodes);
  if (!cards.length) $("my-cards").replaceChildren(el("p", { class: "muted", text: t("No cards: you are not in this deal.") }));
  renderHint(cards, drawn);
  renderActions(cards, drawn);
}

// Every call the rules allow with these six cards: all six (valued only as a six-card
// combination) or five, discarding any card but one just taken from the pile. All are
// ranked in one request; the strongest winning one is the hint.
function callChoices(cards, drawn) {
  const fromPile = drawn && drawn.source === "discard" ? drawn.card : null;
  const choices = [cards];
  for (const spare of cards) {
    if (spare !== fromPile) choices.push(cards.filter((code) => code !== spare));
  }
  return choices;
}

async function loadHint(key, cards, drawn, wildRank) {
  const choices = callChoices(cards, drawn);
  try {
    const body = await api("POST", "/v1/evaluate", {
      body: { game: "paiute", wild_rank: wildRank, hands: choices.map((hand) => hand.join(" ")) },
    });
    if (hint.key === key) {
      let best = null;
      body.results.forEach((result, i) => {
        if (result.strength && (!best || result.strength > best.result.strength)) {
          best = { result, cards: choices[i] };
        }
      });
      hint.result = best ? best.result : { strength: 0 };
      hint.cards = best ? best.cards : null;
      render();
    }
  } catch {
    // the hint is a convenience; without it the player picks the cards alone
  }
}

function renderHint(cards, drawn) {
  const box = $("hint");
  if (!pickable() || cards.length !== 6) {
    box.hidden = true;
    return;
  }
  const key = `${view.hand_number}:${cards.join(",")}`;
  if (hint.key !== key) {
    hint = { key, result: null, cards: null };
    loadHint(key, cards, drawn, view.deal.wild_rank);
  }
  box.hidden = false;
  const best = hint.cards;
  if (!hint.result) {
    box.replaceChildren(t("Looking for a winning combination…"));
  } else if (!best) {
    box.replaceChildren(t("No winning combination yet: tap one card and discard it."));
  } else {
    box.replaceChildren(
      el("span", { text: t("You can call: {hand}.", { hand: hint.result.description }) }),
      " ",
      el("button", {
        class: "quiet", text: t("Select it"),
        attrs: { type: "button", id: "select-best", "data-action": "select-best", "aria-keyshortcuts": "B" },
        on: { click: () => { selected = new Set(best); render(); } },
      }),
    );
  }
}

// A move's button. One that cannot be pressed now says so (aria-disabled) but keeps its
// place in the tab order, so the focus on it survives while a move is on its way.
function button(text, kind, onClick, options = {}) {
  const off = busy || options.disabled;
  return el("button", {
    class: kind,
    attrs: {
      type: "button", "aria-disabled": off ? "true" : null, id: options.id, "data-action": options.action,
      "aria-keyshortcuts": KEY_OF[options.action],
    },
    on: { click: (event) => { if (event.currentTarget.getAttribute("aria-disabled") !== "true") onClick(); } },
  }, [text]);
}

function renderActions(cards, drawn) {
  const box = $("actions");
  const buttons = [];
  const seats = Object.keys(view.seats).length;
  if (view.phase === "waiting" && mySeat !== null) {
    buttons.push(button(t("Start the game"), "primary", () => act({ action: "start" }), {
      disabled: seats < view.options.min_players, action: "start",
    }));
  } else if (view.phase === "declaring" && myTurn()) {
    // NOTE: the Guts buttons: go in (play for the pot) or out (drop the hand).
    buttons.push(button(t("In"), "primary big", () => act({ action: "declare", choice: "in" }), { action: "in" }));
    buttons.push(button(t("Out"), "secondary big", () => act({ action: "declare", choice: "out" }), { action: "out" }));
  } else if (view.phase === "declaring" && view.you && view.you.declaration) {
    const waiting = view.you.declaration === "in"
      ? t("You are in. Waiting for the others…")
      : t("You are out. Waiting for the others…");
    buttons.push(el("p", { class: "muted", text: waiting }));
  } else if (view.game === "paiute" && myTurn() && view.pending.action === "draw") {
    const deal = view.deal;
    buttons.push(button(t("Draw from the stock ({n})", { n: deal.stock_size }), "primary big",
      () => act({ action: "draw", source: "stock" }), { action: "draw-stock" }));
    if (deal.discard_top) {
      buttons.push(button(t("Take {card} from the pile", { card: cardWord(deal.discard_top) }), "secondary big",
        () => act({ action: "draw", source: "discard" }), { action: "draw-discard" }));
    }
  } else if (pickable()) {
    const picked = cards.filter((code) => selected.has(code));
    const fromPile = drawn && drawn.source === "discard" ? drawn.card : null;
    const discardable = picked.length === 1 && picked[0] !== fromPile;
    const discard = picked.length === 1 ? t("Discard {card}", { card: cardWord(picked[0]) }) : t("Discard (tap one card)");
    buttons.push(button(discard, "secondary big",
      () => act({ action: "discard", card: picked[0] }, "discard"), { disabled: !discardable, action: "discard" }));
    const callable = picked.length === 5 || picked.length === 6;
    let call;
    if (view.phase === "last_turns") {
      // NOTE: in a Paiute deal's last turns a player lays down a winning hand instead of calling.
      call = callable ? t("Lay down these {n}", { n: picked.length }) : t("Lay down (tap 5 or 6 cards)");
    } else {
      // NOTE: to call in Paiute is to show a winning hand of 5 or 6 cards and end the deal.
      call = callable ? t("Call with these {n}", { n: picked.length }) : t("Call (tap 5 or 6 cards)");
    }
    buttons.push(button(call, "primary big", () => {
      const rest = cards.filter((code) => !selected.has(code));
      act({ action: "call", cards: picked, discard: rest.length ? rest[0] : null }, "call");
    }, { disabled: !callable, action: "call" }));
    if (fromPile) {
      const card = cardWord(fromPile);
      buttons.push(el("p", { class: "muted" }, [t("{card} came from the pile: it cannot be discarded this turn.", { card })]));
    }
  }
  box.replaceChildren(...buttons);
}

// After a call, who gets a last turn: the players after the caller up to the dealer.
function calledWords(deal) {
  const name = nameNode(deal.caller);
  const after = deal.players.slice(deal.players.indexOf(deal.caller) + 1);
  if (!after.length) return t("{name} called as the dealer: nobody gets a last turn, the deal ends.", { name });
  const names = listNames(after.map(nameOf));
  if (isMine(deal.caller)) return t("You called; a last turn for {names}.", { names });
  if (after.some(isMine)) return t("{name} called; you get a last turn to lay down a better hand.", { name });
  return t("{name} called; a last turn for {names}.", { name, names });
}

function renderResult() {
  const section = $("result");
  const deal = view.deal;
  const shown = (deal && deal.shown) || {};
  const seats = Object.keys(shown);
  if (!deal || (!deal.ended && !seats.length)) {
    section.hidden = true;
    return;
  }
  section.hidden = false;
  $("result-title").textContent = deal.ended ? t("Deal {number}: result", { number: deal.number }) : t("Shown so far");
  const said = deal.ended ? headline(deal) : [calledWords(deal)];
  $("headline").replaceChildren(...said);
  announceChange("headline", $("headline").textContent);
  const { won } = dealMoney(deal);
  const ranks = deal.ranks || {};
  const claims = deal.claims || {};
  $("shown").replaceChildren(...seats.map((seat) => {
    const description = (ranks[seat] && ranks[seat].description) || (claims[seat] && claims[seat].description) || "";
    return el("li", { class: won[seat] ? "winner" : "", attrs: { "data-seat": seat } }, [
      el("bdi", { class: "name", text: nameOf(seat) }),
      el("span", { class: "cards", attrs: { dir: "ltr" } }, shown[seat].map((code) => wildNode(code, isWild(code)))),
      el("span", { class: "description", text: described(description, shown[seat]) }),
      wildNote(shown[seat]),
      won[seat] ? el("span", { class: "badge in", text: t("Wins {n}", { n: won[seat] }) }) : null,
    ]);
  }));
}

function renderForms() {
  const seatForm = $("seat-form");
  const seats = Object.keys(view.seats).length;
  seatForm.hidden = !player || mySeat !== null || seats >= view.options.max_players;
  const name = seatForm.elements.namedItem("name");
  if (player && !name.value && document.activeElement !== name) name.placeholder = player.name;
  const buyIn = seatForm.elements.namedItem("buy_in");
  buyIn.min = String(view.options.min_buy_in);
  buyIn.max = String(view.options.max_buy_in);
  if (!buyIn.value) buyIn.value = String(Math.min(view.options.max_buy_in, Math.max(view.options.min_buy_in, 100)));
  const range = t("Buy-in: {min} to {max} chips.", { min: view.options.min_buy_in, max: view.options.max_buy_in });
  $("buy-in-range").textContent = range;
  $("rebuy-range").textContent = range;
  const mine = mySeat !== null && view.seats[String(mySeat)];
  const rebuy = $("rebuy-form");
  // A rebuy is taken between the deals one is dealt into.
  const dealtIn = Boolean(view.deal && !view.deal.ended && view.deal.players.includes(mySeat));
  const broke = Boolean(mine && mine.out_of_chips && view.options.rebuy && !dealtIn);
  // Out of chips just now: the rebuy comes into view.
  if (broke && rebuy.hidden) requestAnimationFrame(() => rebuy.scrollIntoView({ block: "nearest" }));
  rebuy.hidden = !broke;
  const amount = rebuy.elements.namedItem("amount");
  amount.min = String(view.options.min_buy_in);
  amount.max = String(view.options.max_buy_in);
  if (!amount.value) amount.value = String(view.options.min_buy_in);
  $("leave").hidden = mySeat === null;
  $("show-limits").hidden = !player;
  $("back-panel").hidden = !(mine && mine.away);
  const botForm = $("bot-form");
  botForm.hidden = !player || !view.created_by_you || seats >= view.options.max_players;
  const botBuyIn = botForm.elements.namedItem("buy_in");
  botBuyIn.min = buyIn.min;
  botBuyIn.max = buyIn.max;
  if (!botBuyIn.value) botBuyIn.value = buyIn.value;
}

function tick() {
  const node = $("countdown");
  const deadline = view && view.deadline;
  if (!deadline) {
    node.textContent = "–";
    node.classList.remove("urgent");
    return;
  }
  const left = Math.max(0, Math.ceil(deadline - Date.now() / 1000));
  const minutes = Math.floor(left / 60);
  const seconds = new Intl.NumberFormat(language(), { minimumIntegerDigits: 2 }).format(left % 60);
  // NOTE: the time left to decide, under a minute: "42s" (over a minute the page shows "1:05").
  node.textContent = minutes ? `${number(minutes)}:${seconds}` : t("{seconds}s", { seconds: left });
  node.classList.toggle("urgent", left <= 5);
  // The server's clock applies a passed deadline and its events come on the stream; a
  // seat reads the table again only if they are long overdue.
  const overdue = Date.now() / 1000 - deadline;
  const patience = mySeat !== null ? 5 : 0.5;
  if (left === 0 && overdue > patience && Date.now() - refreshedAtZero > 5000) {
    refreshedAtZero = Date.now();
    refresh();
  }
}

// --------------------------------------------------------------------- screen readers and keys

// What a screen reader hears: a line added to the live log (the last few kept).
const SAID_IN_HEADLINE = new Set(["pot_won", "pot_split", "paid", "wimp_paid"]);
const ANNOUNCED = 6;
const lastSaid = {};

function announce(words) {
  const text = typeof words === "string" ? words : words.textContent;
  if (!text) return;
  const box = $("announcer");
  box.append(el("p", { text }));
  while (box.childElementCount > ANNOUNCED) box.firstElementChild.remove();
}

// Say a line (what happens now, the deal's result) when its words change.
function announceChange(what, text) {
  if (lastSaid[what] === text) return;
  lastSaid[what] = text;
  announce(text);
}

// Focus survives every redraw: the page remembers what had the focus (a move's button, a
// card of the hand, a form's field) by what it is, and gives the focus back to it, or to
// its successor when it is gone (the first move offered, else the moves' place, else the
// line saying what happens now).
let focusWanted = null;
const SOMEWHERE = "*";

function focusKey(node) {
  if (!node || node === document.body || !root.contains(node)) return null;
  if (node.dataset.action) return `[data-action="${node.dataset.action}"]`;
  if (node.dataset.card && node.closest("#my-cards")) return `#my-cards [data-card="${node.dataset.card}"]`;
  if (node.dataset.removeBot) return `[data-remove-bot="${node.dataset.removeBot}"]`;
  if (node.id) return `#${node.id}`;
  return SOMEWHERE;
}

function shown(node) {
  return Boolean(node && node.isConnected && node.checkVisibility());
}

function firstMove() {
  return [...$("actions").querySelectorAll("button")].find((node) => node.getAttribute("aria-disabled") !== "true");
}

function keepFocus() {
  const active = document.activeElement;
  if (active === $("actions") && !active.childElementCount) {
    $("phase").focus({ preventScroll: true });
    return;
  }
  if (active && active !== document.body && shown(active)) {
    // Waiting on the moves' place (or the line saying what happens now, where the focus
    // waits between deals), and a move is offered now: to it.
    const move = (active === $("actions") || active === $("phase")) && firstMove();
    if (move) move.focus();
    return;
  }
  if (!focusWanted) return;
  const again = focusWanted !== SOMEWHERE && document.querySelector(focusWanted);
  if (shown(again)) {
    again.focus({ preventScroll: true });
    return;
  }
  const move = firstMove();
  if (move) move.focus({ preventScroll: true });
  else if (shown($("actions")) && $("actions").childElementCount) $("actions").focus({ preventScroll: true });
  else $("phase").focus({ preventScroll: true });
}

document.addEventListener("focusin", (event) => {
  const key = focusKey(event.target);
  if (key) focusWanted = key;
});
// The player moved the focus away (a click on the felt): the page leaves it be. A node
// taken out by a redraw is not moved away from: its successor gets the focus.
document.addEventListener("focusout", (event) => {
  if (event.relatedTarget) return;
  const left = event.target;
  setTimeout(() => {
    if (left.isConnected && shown(left) && document.activeElement === document.body) focusWanted = null;
  }, 0);
});

function showKeys() {
  $("keys-list").replaceChildren(...KEYS.flatMap((entry) => [
    el("dt", {}, [el("kbd", { text: entry.key })]),
    el("dd", { text: entry.words() }),
  ]));
  const dialog = $("keys-help");
  if (!dialog.open) dialog.showModal();
}

function pressKey(event) {
  if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
  // Typing in a field, or in a dialog still open, is not a move. A control of a dialog
  // that has just closed may keep the focus until the browser moves it: not ignored.
  const target = event.target;
  if (target instanceof Element) {
    const field = target.closest("input, select, textarea");
    if ((field && shown(field)) || target.closest("dialog[open]")) return;
  }
  if (event.key === "?" || (event.code === "Slash" && event.shiftKey)) {
    event.preventDefault();
    showKeys();
    return;
  }
  const digit = /^(?:Digit|Numpad)([1-6])$/.exec(event.code);
  if (digit) {
    const card = $("my-cards").querySelectorAll("button.card")[Number(digit[1]) - 1];
    if (!card) return;
    event.preventDefault();
    card.focus();
    card.click();
    return;
  }
  const entry = KEYS.find((item) => item.codes && item.codes.includes(event.code));
  const node = entry && document.querySelector(`[data-action="${entry.action}"]`);
  if (!shown(node) || node.getAttribute("aria-disabled") === "true") return;
  event.preventDefault();
  node.focus();
  node.click();
}

// --------------------------------------------------------------------- forms

// A form's buy-in, a whole number of chips; null (and the page says why) if it is not.
function buyInOf(form, source) {
  const buyIn = Number(form.elements.namedItem("buy_in").value);
  if (Number.isInteger(buyIn)) return buyIn;
  report(new ProblemError(422, { detail: t("The buy-in is a whole number of chips.") }), source);
  return null;
}

async function sit(event) {
  event.preventDefault();
  if (!player) return;
  const form = event.target;
  const name = form.elements.namedItem("name").value.trim();
  const buyIn = buyInOf(form, "sit");
  if (buyIn === null) return;
  const submit = form.querySelector("button[type=submit]");
  submit.disabled = true;
  const body = { buy_in: buyIn };
  if (name) body.name = name;
  try {
    await api("POST", `${tablePath}/seats`, { body, token: token() });
    clearReport("sit");
  } catch (error) {
    if (keyRefused(error)) signedOut();
    // Already seated here (from another device): the read below finds the seat.
    if (!(error instanceof ProblemError && error.code === "already_seated")) report(error, "sit");
  } finally {
    submit.disabled = false;
  }
  await resync();
  refreshBalance();
}

async function rebuy(event) {
  event.preventDefault();
  const amount = Number(event.target.elements.namedItem("amount").value);
  if (!Number.isInteger(amount)) {
    report(new ProblemError(422, { detail: t("The amount is a whole number of chips.") }), "act");
    return;
  }
  await act({ action: "rebuy", amount });
  refreshBalance();
}

// Leaving during a deal one is dealt into takes effect when it ends: the page asks first.
function leave() {
  if (mySeat === null || busy || !player) return;
  const deal = view && view.deal;
  if (!deal || deal.ended || !deal.players.includes(mySeat)) {
    leaveNow();
    return;
  }
  const ask = $("leave-confirm");
  ask.returnValue = "";
  ask.showModal();
}

async function leaveNow() {
  if (mySeat === null || busy || !player) return;
  busy = true;
  try {
    await api("DELETE", `${tablePath}/seats/${mySeat}`, { token: token() });
    clearReport("act");
  } catch (error) {
    if (keyRefused(error)) signedOut();
    if (!(error instanceof ProblemError && (error.code === "already_left" || error.code === "not_seated"))) {
      report(error, "act");
    }
  } finally {
    busy = false;
    await resync();
    refreshBalance();
  }
}

// A computer player, seated or removed by the table's creator (POST/DELETE .../bots).
async function addBot(event) {
  event.preventDefault();
  if (!player) return;
  const form = event.target;
  const buyIn = buyInOf(form, "act");
  if (buyIn === null) return;
  const submit = form.querySelector("button[type=submit]");
  submit.disabled = true;
  const body = { strategy: form.elements.namedItem("strategy").value, buy_in: buyIn };
  try {
    await api("POST", `${tablePath}/bots`, { body, token: token() });
    clearReport("act");
  } catch (error) {
    if (keyRefused(error)) signedOut();
    report(error, "act");
  } finally {
    submit.disabled = false;
  }
  await resync();
}

async function removeBot(seat) {
  if (!player) return;
  try {
    await api("DELETE", `${tablePath}/bots/${seat}`, { token: token() });
    clearReport("act");
  } catch (error) {
    if (keyRefused(error)) signedOut();
    report(error, "act");
  }
  await resync();
}

$("seat-form").addEventListener("submit", sit);
$("bot-form").addEventListener("submit", addBot);
$("rebuy-form").addEventListener("submit", rebuy);
$("leave").addEventListener("click", leave);
$("leave-confirm").addEventListener("close", () => {
  if ($("leave-confirm").returnValue === "leave") leaveNow();
});
$("back").addEventListener("click", () => act({ action: "back" }));
$("show-keys").addEventListener("click", showKeys);
// Closed, the list of keys gives the focus back to the page: a key pressed next is a move.
$("keys-help").addEventListener("close", () => {
  const active = document.activeElement;
  if (active instanceof HTMLElement && $("keys-help").contains(active)) active.blur();
});
const care = mountCare($("player-menu"), token, () => {
  resync();
  refreshBalance();
});
$("show-limits").addEventListener("click", () => {
  if (!$("limits-menu").open) $("limits-menu").showModal();
  care.refresh();
});
document.addEventListener("keydown", pressKey);
setInterval(tick, 250);
setInterval(() => {
  if (mySeat === null) refresh();
}, SPECTATOR_POLL_MS);
document.addEventListener("visibilitychange", () => {
  if (!document.hidden && mySeat === null) refresh();
});
// Seat tokens kept by earlier versions of this page: the player's key replaces them.
window.localStorage.removeItem(`cardroom.seat.${tableId}`);
let spoken = false;
onLanguageChange(() => {
  translateStatic(WORDS);
  drawLog();
  render();
  // Another language: the table read again brings its hands' descriptions in it.
  if (spoken) resync();
  spoken = true;
});
resync();
