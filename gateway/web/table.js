// One table, played through the public HTTP API.
//
// The seat token lives in localStorage under "cardroom.seat.<table id>", so a reload
// resumes the seat. An EventSource cannot send an Authorization header, so the event
// stream is watched as a spectator: each event says "something changed", and the page
// then reads the table with the seat's token through fetch(), which shows its cards.
import {
  api,
  cardBack,
  cardLabel,
  cardNode,
  chips,
  el,
  listNames,
  ProblemError,
  showProblem,
} from "./cardroom.js";

const tableId = decodeURIComponent(window.location.pathname.split("/")[2] || "");
const tablePath = `/v1/tables/${encodeURIComponent(tableId)}`;
const storeKey = `cardroom.seat.${tableId}`;
const SAFETY_POLL_MS = 15000;
const LOG_LENGTH = 14;
// Every event type the gateway writes; EventSource delivers named events only to
// listeners of that name.
const EVENT_TYPES = [
  "table_created", "seated", "leaving", "left", "cashed_out", "rebought", "game_started",
  "game_ended", "deal_started", "ante", "ante_skipped", "cards_dealt", "dealt", "phase",
  "declared", "your_declaration", "declarations_revealed", "showdown", "pot_won", "pot_split",
  "paid", "wimp_paid", "deal_ended", "timeout", "wild_card", "discard_started", "turn",
  "turn_held", "drew",
  "drew_card", "discarded", "called", "laid_down", "reshuffled", "deal_void", "pot_carried",
  "message",
];
const RANK_WORDS = { 11: "jacks", 12: "queens", 13: "kings", 14: "aces" };

const $ = (id) => document.getElementById(id);
const root = $("table");
const problemBox = $("problem");

let mySeat = loadSeat();
let view = null;
let selected = new Set();
let selectionKey = "";
let hint = { key: "", result: null, cards: null };
let loading = null;
let again = false;
let busy = false;
let stream = null;
let gone = false;
let refreshedAtZero = 0;
const seatNames = {};
const logLines = [];

// --------------------------------------------------------------------- the seat

function loadSeat() {
  try {
    const saved = JSON.parse(window.localStorage.getItem(storeKey) || "null");
    if (saved && typeof saved.token === "string" && Number.isInteger(saved.seat)) return saved;
  } catch {
    // a damaged entry is as good as none
  }
  return null;
}

function keepSeat(seat) {
  mySeat = seat;
  window.localStorage.setItem(storeKey, JSON.stringify(seat));
}

function forgetSeat() {
  mySeat = null;
  window.localStorage.removeItem(storeKey);
  view = null;
}

// --------------------------------------------------------------------- reading

function report(error, source) {
  problemBox.dataset.source = source;
  showProblem(problemBox, error);
}

function clearReport(source) {
  if (problemBox.dataset.source === source) showProblem(problemBox, null);
}

function accept(table) {
  if (!table || (view && table.version < view.version && table.table_id === view.table_id)) return;
  view = table;
  render();
}

async function refresh() {
  if (loading) {
    again = true;
    return loading;
  }
  loading = (async () => {
    do {
      again = false;
      try {
        accept(await api("GET", tablePath, { token: mySeat && mySeat.token }));
        clearReport("load");
      } catch (error) {
        if (error instanceof ProblemError && error.code === "invalid_token" && mySeat) {
          forgetSeat();
          again = true;
          continue;
        }
        report(error, "load");
        if (error instanceof ProblemError && error.code === "table_not_found") {
          gone = true;
          if (stream) stream.close();
          root.setAttribute("aria-busy", "false");
          $("phase").textContent = "No such table";
        }
      }
    } while (again);
    loading = null;
  })();
  return loading;
}

async function act(action, label) {
  if (busy || !mySeat) return;
  busy = true;
  render();
  try {
    const body = await api("POST", `${tablePath}/actions`, { body: action, token: mySeat.token });
    clearReport("act");
    accept(body.table);
  } catch (error) {
    report(error, "act");
    if (error instanceof ProblemError && error.code === "invalid_token") forgetSeat();
    refresh();
  } finally {
    busy = false;
    if (label) selected = new Set();
    render();
  }
}

// --------------------------------------------------------------------- names and words

function nameOf(seat) {
  const key = String(seat);
  if (key === "ghost") return "The ghost";
  if (view && view.seats[key]) return view.seats[key].name;
  if (view && view.deal && view.deal.names && view.deal.names[key]) return view.deal.names[key];
  return seatNames[key] || `Seat ${key}`;
}

function isMine(seat) {
  return mySeat !== null && Number(seat) === mySeat.seat;
}

function pendingSeats() {
  return (view && view.pending && view.pending.seats) || [];
}

function myTurn() {
  return mySeat !== null && pendingSeats().includes(mySeat.seat);
}

function phaseText() {
  const pending = view.pending;
  const seatCount = Object.keys(view.seats).length;
  switch (view.phase) {
    case "waiting": {
      const least = view.options.min_players;
      if (seatCount < least) return `Waiting for players: ${seatCount} seated, ${least} needed`;
      return "Ready: any seated player may start the game";
    }
    case "declaring": {
      if (myTurn()) return "Your call: in or out?";
      const names = pendingSeats().map(nameOf);
      if (view.options.declare === "sequential") return `${listNames(names)} to declare`;
      return `Waiting for ${listNames(names)} to declare`;
    }
    case "playing":
    case "last_turns": {
      const prefix = view.phase === "last_turns" ? "Last turns: " : "";
      const verb = pending && pending.action === "draw" ? "draw" : "discard or call";
      if (myTurn()) return `${prefix}Your turn: ${verb}`;
      return `${prefix}${nameOf(view.deal.turn)} to ${verb}`;
    }
    case "showdown":
      return "Showdown: ranking the hands…";
    case "between_deals":
      return view.game_in_progress ? "Next deal soon" : "Game over: the next game starts soon";
    default:
      return view.phase;
  }
}

function describeEvent(item) {
  const d = item.data || {};
  const who = () => nameOf(d.seat);
  switch (item.type) {
    case "table_created":
      return "The table opened";
    case "seated":
      seatNames[String(d.seat)] = d.name;
      return `${d.name} sat down with ${chips(d.stack)}`;
    case "leaving":
      return `${who()} leaves after this deal`;
    case "left":
      return `${who()} left the table`;
    case "cashed_out":
      return `${who()} cashed out ${chips(d.amount)}`;
    case "rebought":
      return `${who()} bought ${chips(d.amount)} more`;
    case "game_started":
      return `Game ${d.game_number} starts`;
    case "game_ended":
      return `Game ${d.game_number} is over`;
    case "deal_started":
      return `Deal ${d.hand_number}: ${nameOf(d.dealer)} deals`;
    case "ante":
      return d.amount ? `${who()} antes ${chips(d.amount)}` : null;
    case "ante_skipped":
      return `${who()} skips the ante`;
    case "declared":
      return `${who()} has decided`;
    case "declarations_revealed": {
      const ins = Object.entries(d.choices || {}).filter(([, c]) => c === "in").map(([s]) => nameOf(s));
      return ins.length ? `In: ${listNames(ins)}` : "Nobody went in";
    }
    case "showdown":
      return "Showdown";
    case "pot_won":
      return `${who()} wins ${chips(d.amount)}`;
    case "pot_split":
      return `${listNames((d.shares || []).map((s) => nameOf(s.seat)))} split the pot`;
    case "paid":
      return `${who()} pays ${chips(d.amount)}`;
    case "wimp_paid":
      return `${who()} had the best hand and pays ${chips(d.amount)} (wimp)`;
    case "timeout":
      return `${who()} ran out of time`;
    case "turn_held":
      return `${who()}'s call waits for the hand evaluator: the turn is held open`;
    case "wild_card":
      return `Wild card: ${cardLabel(d.card)} (${RANK_WORDS[d.rank] || `${d.rank}s`} are wild)`;
    case "drew":
      return d.card ? `${who()} took ${cardLabel(d.card)} from the pile` : `${who()} drew from the stock`;
    case "discarded":
      return `${who()} discarded ${cardLabel(d.card)}`;
    case "called":
      return `${who()} calls with ${d.description}`;
    case "laid_down":
      return `${who()} lays down ${d.description}`;
    case "reshuffled":
      return "The discards were shuffled into a new stock";
    case "deal_void":
      return "No call: the deal is void";
    case "pot_carried":
      return `The pot of ${chips(d.pot)} carries over`;
    default:
      return null;
  }
}

function logEvent(item) {
  const line = describeEvent(item);
  if (!line) return;
  logLines.push(line);
  while (logLines.length > LOG_LENGTH) logLines.shift();
  $("log").replaceChildren(...logLines.slice().reverse().map((text) => el("li", { text })));
}

// --------------------------------------------------------------------- chips moved

function dealMoney(deal) {
  const won = {};
  const paid = {};
  for (const move of deal.flow || []) {
    if (move.seat === null || move.seat === undefined) continue;
    const key = String(move.seat);
    if (move.source === "pot" && move.target === "seat") won[key] = (won[key] || 0) + move.amount;
    if (move.source === "seat" && move.kind !== "ante") paid[key] = (paid[key] || 0) + move.amount;
  }
  return { won, paid };
}

function headline(deal) {
  const { won, paid } = dealMoney(deal);
  const winners = Object.keys(won);
  const parts = [];
  if (winners.length === 1) {
    parts.push(`${nameOf(winners[0])} wins ${chips(won[winners[0]])}.`);
  } else if (winners.length > 1) {
    const shares = winners.map((s) => `${nameOf(s)} ${won[s]}`).join(", ");
    parts.push(`${listNames(winners.map(nameOf))} split the pot (${shares}).`);
  } else if (deal.outcome === "nobody_in") {
    parts.push("Nobody went in: the pot stays for the next deal.");
  } else if (deal.outcome === "void") {
    parts.push("No call before the stock ran out: the deal is void and the pot carries over.");
  } else {
    parts.push("Nobody wins this deal.");
  }
  for (const [seat, amount] of Object.entries(paid)) {
    parts.push(`${nameOf(seat)} pays ${chips(amount)}.`);
  }
  return parts.join(" ");
}

// --------------------------------------------------------------------- drawing

function render() {
  if (!view) return;
  root.dataset.version = String(view.version);
  root.dataset.phase = view.phase;
  root.dataset.hand = String(view.hand_number);
  root.dataset.seat = mySeat ? String(mySeat.seat) : "";
  root.setAttribute("aria-busy", "false");
  document.title = `${view.name} · cardroom`;
  $("table-name").textContent = view.name;
  const game = $("game");
  game.textContent = view.game === "guts" ? `${view.options.cards}-card Guts` : "Paiute";
  game.className = `tag ${view.game}`;
  $("pot").textContent = view.reserve ? `${view.pot} (+${view.reserve} reserve)` : String(view.pot);
  $("phase").textContent = phaseText();
  $("status").classList.toggle("mine", myTurn());
  renderBoard();
  renderSeats();
  renderHand();
  renderResult();
  renderForms();
  tick();
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
      el("span", { class: "label", text: "Wild" }),
      cardNode(deal.wild_card, "span", { class: "wild" }),
      el("span", { class: "muted", text: `${RANK_WORDS[deal.wild_rank] || `${deal.wild_rank}s`} are wild` }),
    ]),
    el("div", { class: "pile" }, [
      el("span", { class: "label", text: "Discard pile" }),
      deal.discard_top ? cardNode(deal.discard_top) : el("span", { class: "card empty", text: "–" }),
      el("span", { class: "muted", text: `${deal.discard_size} card${deal.discard_size === 1 ? "" : "s"}` }),
    ]),
    el("div", { class: "pile" }, [
      el("span", { class: "label", text: "Stock" }),
      cardBack(),
      el("span", { class: "muted", text: `${deal.stock_size} left` }),
    ]),
  );
}

function seatBadges(seat, record) {
  const deal = view.deal;
  const key = String(seat);
  const badges = [];
  if (isMine(seat)) badges.push(["you", "You"]);
  if (view.dealer === seat && view.game_in_progress) badges.push(["dealer", "Dealer"]);
  if (pendingSeats().includes(seat)) badges.push(["turn", view.phase === "declaring" ? "Deciding" : "To play"]);
  if (deal && deal.players.includes(seat)) {
    const choice = deal.declarations && deal.declarations[key];
    if (choice) badges.push([choice, choice === "in" ? "In" : "Out"]);
    else if (deal.declared && deal.declared.includes(seat) && !deal.ended) badges.push(["declared", "Decided"]);
    if (deal.caller === seat) badges.push(["in", "Called"]);
  }
  if (record.status === "waiting") badges.push(["muted", "Next game"]);
  if (record.leaving) badges.push(["muted", "Leaving"]);
  if (record.out_of_chips) badges.push(["out", "No chips"]);
  return badges.map(([kind, text]) => el("span", { class: `badge ${kind}`, text }));
}

function renderSeats() {
  const deal = view.deal;
  const money = deal && deal.ended ? dealMoney(deal) : { won: {}, paid: {} };
  const items = Object.values(view.seats).map((record) => {
    const seat = record.seat;
    const key = String(seat);
    let hidden = null;
    if (deal && !deal.ended && record.in_hand && !isMine(seat) && !(deal.shown && deal.shown[key])) {
      const count = view.game === "guts" ? deal.cards_per_hand : (deal.hand_sizes || {})[key] || 0;
      hidden = el("span", { class: "backs", attrs: { "aria-label": `${count} cards face down` } },
        Array.from({ length: count }, () => cardBack()));
    }
    let change = null;
    const delta = (money.won[key] || 0) - (money.paid[key] || 0);
    if (delta) change = el("span", { class: `delta ${delta > 0 ? "up" : "down"}`, text: delta > 0 ? `+${delta}` : `−${-delta}` });
    const classes = ["seat"];
    if (isMine(seat)) classes.push("me");
    if (pendingSeats().includes(seat)) classes.push("turn");
    return el("li", { class: classes.join(" "), attrs: { "data-seat": key } }, [
      el("div", { class: "who" }, [
        el("span", { class: "name", text: record.name }),
        el("span", { class: "badges" }, seatBadges(seat, record)),
      ]),
      hidden,
      el("div", { class: "stack" }, [
        el("span", { class: "chips", attrs: { "data-stack": record.stack }, text: String(record.stack) }),
        change,
      ]),
    ]);
  });
  $("seats").replaceChildren(...items);
  if (!items.length) $("seats").replaceChildren(el("li", { class: "muted", text: "Nobody is seated yet." }));
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
  const nodes = cards.map((code) => {
    if (!canPick) return cardNode(code, "span", { class: drawn && drawn.card === code ? "drawn" : "" });
    const chosen = selected.has(code);
    return cardNode(code, "button", {
      class: `pick${chosen ? " selected" : ""}${drawn && drawn.card === code ? " drawn" : ""}`,
      attrs: { type: "button", "aria-pressed": chosen ? "true" : "false" },
      on: {
        click: () => {
          if (selected.has(code)) selected.delete(code);
          else selected.add(code);
          render();
        },
      },
    });
  });
  $("my-cards").replaceChildren(...nodes);
  if (!cards.length) $("my-cards").replaceChildren(el("p", { class: "muted", text: "No cards: you are not in this deal." }));
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
    box.replaceChildren("Looking for a winning combination…");
  } else if (!best) {
    box.replaceChildren("No winning combination yet: tap one card and discard it.");
  } else {
    box.replaceChildren(
      el("span", { text: `You can call: ${hint.result.description}. ` }),
      el("button", {
        class: "quiet", text: "Select it", attrs: { type: "button", id: "select-best" },
        on: { click: () => { selected = new Set(best); render(); } },
      }),
    );
  }
}

function button(text, kind, onClick, options = {}) {
  return el("button", {
    class: kind,
    text,
    attrs: { type: "button", disabled: busy || options.disabled, id: options.id, "data-action": options.action },
    on: { click: onClick },
  });
}

function renderActions(cards, drawn) {
  const box = $("actions");
  const buttons = [];
  const seats = Object.keys(view.seats).length;
  if (view.phase === "waiting" && mySeat) {
    buttons.push(button("Start the game", "primary", () => act({ action: "start" }), {
      disabled: seats < view.options.min_players, action: "start",
    }));
  } else if (view.phase === "declaring" && myTurn()) {
    buttons.push(button("In", "primary big", () => act({ action: "declare", choice: "in" }), { action: "in" }));
    buttons.push(button("Out", "secondary big", () => act({ action: "declare", choice: "out" }), { action: "out" }));
  } else if (view.phase === "declaring" && view.you && view.you.declaration) {
    buttons.push(el("p", { class: "muted", text: `You are ${view.you.declaration}. Waiting for the others…` }));
  } else if (view.game === "paiute" && myTurn() && view.pending.action === "draw") {
    const deal = view.deal;
    buttons.push(button(`Draw from the stock (${deal.stock_size})`, "primary big",
      () => act({ action: "draw", source: "stock" }), { action: "draw-stock" }));
    if (deal.discard_top) {
      buttons.push(button(`Take ${cardLabel(deal.discard_top)} from the pile`, "secondary big",
        () => act({ action: "draw", source: "discard" }), { action: "draw-discard" }));
    }
  } else if (pickable()) {
    const picked = cards.filter((code) => selected.has(code));
    const fromPile = drawn && drawn.source === "discard" ? drawn.card : null;
    const discardable = picked.length === 1 && picked[0] !== fromPile;
    buttons.push(button(picked.length === 1 ? `Discard ${cardLabel(picked[0])}` : "Discard (tap one card)", "secondary big",
      () => act({ action: "discard", card: picked[0] }, "discard"), { disabled: !discardable, action: "discard" }));
    const callable = picked.length === 5 || picked.length === 6;
    const verb = view.phase === "last_turns" ? "Lay down" : "Call";
    buttons.push(button(callable ? `${verb} with these ${picked.length}` : `${verb} (tap 5 or 6 cards)`, "primary big", () => {
      const rest = cards.filter((code) => !selected.has(code));
      act({ action: "call", cards: picked, discard: rest.length ? rest[0] : null }, "call");
    }, { disabled: !callable, action: "call" }));
    if (fromPile) buttons.push(el("p", { class: "muted", text: `${cardLabel(fromPile)} came from the pile: it cannot be discarded this turn.` }));
  }
  box.replaceChildren(...buttons);
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
  $("result-title").textContent = deal.ended ? `Deal ${deal.number}: result` : "Shown so far";
  $("headline").textContent = deal.ended ? headline(deal) : `${nameOf(deal.caller)} called; the others get a last turn.`;
  const { won } = dealMoney(deal);
  const ranks = deal.ranks || {};
  const claims = deal.claims || {};
  $("shown").replaceChildren(...seats.map((seat) => {
    const description = (ranks[seat] && ranks[seat].description) || (claims[seat] && claims[seat].description) || "";
    return el("li", { class: won[seat] ? "winner" : "", attrs: { "data-seat": seat } }, [
      el("span", { class: "name", text: nameOf(seat) }),
      el("span", { class: "cards" }, shown[seat].map((code) => cardNode(code))),
      el("span", { class: "description", text: description }),
      won[seat] ? el("span", { class: "badge in", text: `Wins ${won[seat]}` }) : null,
    ]);
  }));
}

function renderForms() {
  const seatForm = $("seat-form");
  const seats = Object.keys(view.seats).length;
  seatForm.hidden = mySeat !== null || seats >= view.options.max_players;
  const buyIn = seatForm.elements.namedItem("buy_in");
  buyIn.min = String(view.options.min_buy_in);
  buyIn.max = String(view.options.max_buy_in);
  if (!buyIn.value) buyIn.value = String(Math.min(view.options.max_buy_in, Math.max(view.options.min_buy_in, 100)));
  const mine = mySeat && view.seats[String(mySeat.seat)];
  const rebuy = $("rebuy-form");
  rebuy.hidden = !(mine && mine.out_of_chips && view.options.rebuy);
  const amount = rebuy.elements.namedItem("amount");
  amount.min = String(view.options.min_buy_in);
  amount.max = String(view.options.max_buy_in);
  if (!amount.value) amount.value = String(view.options.min_buy_in);
  $("leave").hidden = mySeat === null;
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
  node.textContent = minutes ? `${minutes}:${String(left % 60).padStart(2, "0")}` : `${left}s`;
  node.classList.toggle("urgent", left <= 5);
  // The server's clock applies a passed deadline; its events usually come first.
  if (left === 0 && Date.now() - refreshedAtZero > 2000) {
    refreshedAtZero = Date.now();
    setTimeout(refresh, 500);
  }
}

// --------------------------------------------------------------------- forms

async function sit(event) {
  event.preventDefault();
  const form = event.target;
  const name = form.elements.namedItem("name").value.trim();
  const buyIn = Number(form.elements.namedItem("buy_in").value);
  if (!name) {
    report(new ProblemError(422, { detail: "Type your name first." }), "sit");
    return;
  }
  if (!Number.isInteger(buyIn)) {
    report(new ProblemError(422, { detail: "The buy-in is a whole number of chips." }), "sit");
    return;
  }
  const submit = form.querySelector("button[type=submit]");
  submit.disabled = true;
  try {
    const body = await api("POST", `${tablePath}/seats`, { body: { name, buy_in: buyIn } });
    keepSeat({ seat: body.seat, token: body.token, name });
    clearReport("sit");
    view = null;
    accept(body.table);
    refresh();
  } catch (error) {
    report(error, "sit");
  } finally {
    submit.disabled = false;
  }
}

async function rebuy(event) {
  event.preventDefault();
  const amount = Number(event.target.elements.namedItem("amount").value);
  if (!Number.isInteger(amount)) {
    report(new ProblemError(422, { detail: "The amount is a whole number of chips." }), "act");
    return;
  }
  await act({ action: "rebuy", amount });
}

async function leave() {
  if (!mySeat || busy) return;
  busy = true;
  try {
    await api("DELETE", `${tablePath}/seats/${mySeat.seat}`, { token: mySeat.token });
    forgetSeat();
    clearReport("act");
  } catch (error) {
    if (error instanceof ProblemError && (error.code === "invalid_token" || error.code === "already_left")) {
      forgetSeat();
    } else {
      report(error, "act");
    }
  } finally {
    busy = false;
    await refresh();
  }
}

// --------------------------------------------------------------------- live updates

function openStream() {
  if (gone) return;
  stream = new EventSource(`${tablePath}/events/stream`);
  const onEvent = (message) => {
    try {
      logEvent(JSON.parse(message.data));
    } catch {
      // a keep-alive or an unreadable event still means "look again"
    }
    refresh();
  };
  for (const type of EVENT_TYPES) stream.addEventListener(type, onEvent);
}

$("seat-form").addEventListener("submit", sit);
$("rebuy-form").addEventListener("submit", rebuy);
$("leave").addEventListener("click", leave);
setInterval(tick, 250);
setInterval(refresh, SAFETY_POLL_MS);
document.addEventListener("visibilitychange", () => {
  if (!document.hidden) refresh();
});
refresh().then(openStream);
