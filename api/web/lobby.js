// The lobby: who is signed in, the player's own tables (GET /v1/players/me/seats), the
// tables to join first, filtered by game, cards, an ante range and a free seat and
// refreshed every few seconds (keyboard focus kept on the table it was on), a quick seat
// at a table like the filters say (POST /v1/tables/quick-seat), a table of one's own
// against two computer players, the form that creates a table through POST /v1/tables
// (as the signed-in player), how each game is played, and the player's limits and
// breaks (care.js).
import { currentPlayer, keyRefused, mountAccount } from "./account.js";
import { mountCare } from "./care.js";
import { api, el, gutsName, ProblemError, showProblem } from "./cardroom.js";
import { bdi, language, onLanguageChange, t, tn, translateStatic } from "./i18n.js";

const REFRESH_MS = 5000;

function phaseWords(phase) {
  if (phase === "waiting") return t("waiting for players");
  return ["declaring", "playing", "last_turns", "showdown", "between_deals"].includes(phase) ? t("in play") : phase;
}

// The lobby's fixed words.
const WORDS = {
  "mine-title": () => t("My tables"),
  "mine-empty": () => t("You hold no seat yet: open a table below and sit down."),
  "other-device": () => t("Play on another device"),
  "key-there": () => t("Your player key: sign in with it there. Anyone holding it plays as you."),
  "tables-title": () => t("Tables"),
  refresh: () => t("Refresh"),
  "tables-empty": () => t("No table to join: create one below, or take a quick seat."),
  "any-game": () => t("Any game"),
  // NOTE: a filter's choice that keeps every table.
  any: () => t("Any"),
  // NOTE: shown in the empty field of the ante filter: any ante.
  "any-ante": () => t("any"),
  // NOTE: the lobby's filter of the ante: the lowest ante a listed table may have.
  "ante-from": () => t("Ante from"),
  // NOTE: the lobby's filter of the ante: the highest ante a listed table may have.
  "ante-to": () => t("Ante up to"),
  guts: () => t("Guts"),
  paiute: () => t("Paiute"),
  "versus-computer": () => t("Play against the computer"),
  "versus-hint": () =>
    t("A new table of your own with two computer players, each marked as one; you sit with the buy-in above."),
  "how-to-play": () => t("How to play"),
  // NOTE: a link to the rules of one game: {game} is its name (Guts or Paiute).
  "how-to-play-guts": () => t("How to play {game}", { game: t("Guts") }),
  "how-to-play-paiute": () => t("How to play {game}", { game: t("Paiute") }),
  "guts-ante": () => t("Everyone puts the ante into the pot and is dealt three cards (or two)."),
  "guts-win": () =>
    t("Of the players who are in, the best hand wins the pot; one player alone in wins it without showing."),
  "guts-match": () =>
    t("Every other player who was in loses: they match the pot, paying as much as it held into the next deal's pot."),
  "guts-end": () => t("Nobody in: the pot stays for the next deal. The game ends when a win empties the pot."),
  "guts-hands": () =>
    t("Three cards, best first: straight flush, three of a kind, straight, flush, pair, high card. Two cards: a pair beats any two unequal cards."),
  "paiute-deal": () =>
    t("Everyone antes and gets five cards; the card turned up after them makes its rank wild for the deal."),
  "paiute-turn": () =>
    t("On your turn, draw the top card of the stock or of the discard pile, then discard one card, or call."),
  "paiute-call": () =>
    t("To call you show a winning combination; each player after you gets one last turn, and the best hand laid down wins the pot."),
  "paiute-hands": () =>
    t("Winning combinations, best first: five of a kind, royal flush, straight flush (five cards); four and two of a kind, three and three of a kind, three pairs (six cards)."),
  "free-seat": () => t("Only tables with a free seat"),
  // NOTE: the chips a player sits down with.
  "buy-in": () => t("Buy-in"),
  "quick-seat": () => t("Seat me at a table like this"),
  "quick-seat-hint": () =>
    t("The fullest table with a free seat that these filters keep (Guts if no game is chosen), or a new one."),
  more: () => t("More tables"),
  "create-title": () => t("New table"),
  game: () => t("Game"),
  "table-name": () => t("Table name"),
  optional: () => t("(optional)"),
  // NOTE: an example of a table's name, shown in its empty field.
  friday: () => t("Friday night"),
  // NOTE: the chips every player puts into the pot before a deal.
  ante: () => t("Ante"),
  "turn-seconds": () => t("Seconds per decision"),
  "deal-pause": () => t("Pause between deals (s)"),
  "max-players": () => t("Most players"),
  cards: () => t("Cards"),
  "three-cards": () => tn("{n} card", "{n} cards", 3),
  "two-cards": () => tn("{n} card", "{n} cards", 2),
  declaring: () => t("Declaring"),
  "at-once": () => t("All at once"),
  "in-turn": () => t("In turn"),
  "who-pays": () => t("Who matches the pot"),
  "every-loser": () => t("Every loser"),
  "worst-only": () => t("Worst hand only"),
  "ante-when": () => t("Everyone antes when"),
  "pot-empty": () => t("Pot is empty"),
  "every-deal": () => t("Every deal"),
  cap: () => t("Cap per deal"),
  // NOTE: shown in the empty field of the cap per deal: no cap.
  none: () => t("none"),
  // NOTE: "Wimp" is the Guts rule's name: when nobody goes in, the best hand pays the pot.
  wimp: () => t("Wimp: nobody in, the best hand pays"),
  // NOTE: the ghost is a hand dealt to nobody that the players who go in must beat.
  ghost: () => t("Ghost hand to beat"),
  rebuys: () => t("Rebuys allowed"),
  reshuffles: () => t("Reshuffles before a void deal"),
  create: () => t("Create table"),
};

const problemBox = document.getElementById("problem");
const list = document.getElementById("tables");
const empty = document.getElementById("tables-empty");
const more = document.getElementById("more");
const form = document.getElementById("create");
const filters = document.getElementById("filters");
const quick = document.getElementById("quick-seat");
const versus = document.getElementById("versus-computer");
let pages = 1;
let timer = null;
let shownTables = [];
const care = mountCare(document.getElementById("player-menu"), () => currentPlayer()?.key, () => loadTables());
const account = mountAccount(() => {
  care.refresh();
  loadTables();
});
care.refresh();

function summary(table) {
  const o = table.options || {};
  if (table.game === "guts") {
    const parts = [gutsName(o.cards), t("ante {n}", { n: o.ante })];
    parts.push(o.declare === "sequential" ? t("declare in turn") : t("declare at once"));
    if (o.losers_pay === "worst") parts.push(t("worst hand pays"));
    if (o.wimp) parts.push(t("wimp"));
    if (o.ghost) parts.push(t("ghost"));
    if (o.cap) parts.push(t("cap {n}", { n: o.cap }));
    parts.push(buyInRange(o));
    return parts.join(" · ");
  }
  const reshuffles = tn("{n} reshuffle", "{n} reshuffles", o.max_reshuffles);
  return [t("Paiute"), t("ante {n}", { n: o.ante }), reshuffles, buyInRange(o)].join(" · ");
}

// What a seat at the table may sit down with, said before sitting.
function buyInRange(options) {
  // NOTE: the chips a player may sit down with at a table: from {min} to {max}.
  return t("buy-in {min} to {max}", { min: options.min_buy_in, max: options.max_buy_in });
}

function tableItem(table) {
  const link = el("a", { class: "table-link", attrs: { href: `/tables/${encodeURIComponent(table.id)}` } }, [
    el("bdi", { class: "table-name", text: table.name }),
    el("span", { class: "table-summary", text: summary(table) }),
    el("span", { class: "table-seats" }, [
      el("span", { class: `tag ${table.game}`, text: table.game === "guts" ? t("Guts") : t("Paiute") }),
      table.computer_players
        ? el("span", { class: "tag computer", text: t("Computer players") })
        : null,
      el("span", {
        text: [
          tn("{n} seated", "{n} seated", table.seats_taken),
          // NOTE: how many of a table's seats the computer plays (computer players).
          ...(table.computer_players ? [tn("{n} computer", "{n} computers", table.computer_players)] : []),
          tn("{n} free", "{n} free", table.seats_free),
        ].join(" · "),
      }),
      el("span", { class: "muted", text: phaseWords(table.phase) }),
    ]),
  ]);
  return el("li", { attrs: { "data-table": table.id } }, [link]);
}

function myTableItem(entry) {
  const phase = phaseWords(entry.phase);
  const link = el("a", { class: "table-link", attrs: { href: `/tables/${encodeURIComponent(entry.table_id)}` } }, [
    el("bdi", { class: "table-name", text: entry.table_name }),
    el("span", { class: "table-summary" }, [
      tn("You sit as {name}, seat {seat}: {n} chip", "You sit as {name}, seat {seat}: {n} chips", entry.stack, {
        name: bdi(entry.name), seat: entry.seat,
      }),
    ]),
    el("span", { class: "table-seats" }, [
      el("span", { class: `tag ${entry.game}`, text: entry.game === "guts" ? t("Guts") : t("Paiute") }),
      el("span", { class: "muted", text: phase }),
      el("span", { class: "rejoin", text: t("Rejoin") }),
    ]),
  ]);
  return el("li", { attrs: { "data-table": entry.table_id } }, [link]);
}

async function loadMine() {
  const player = currentPlayer();
  const section = document.getElementById("mine");
  if (!player) {
    section.hidden = true;
    return;
  }
  try {
    const body = await api("GET", "/v1/players/me/seats", { token: player.key });
    redrawKeepingFocus(document.getElementById("my-tables"), body.seats, myTableItem);
    document.getElementById("mine-empty").hidden = body.seats.length > 0;
    section.hidden = false;
    if (problemBox.dataset.source === "mine") showProblem(problemBox, null);
  } catch (error) {
    if (keyRefused(error)) account.signedOut();
    section.hidden = true;
    problemBox.dataset.source = "mine";
    showProblem(problemBox, error);
  }
}

async function loadTables() {
  clearTimeout(timer);
  try {
    await loadMine();
    const items = [];
    let cursor = null;
    let next = null;
    for (let page = 0; page < pages; page += 1) {
      const query = filterQuery();
      if (cursor) query.set("cursor", cursor);
      const body = await api("GET", `/v1/tables?${query}`);
      items.push(...body.tables);
      next = body.next;
      if (!next) break;
      cursor = next;
    }
    shownTables = items;
    redrawKeepingFocus(list, items, tableItem);
    empty.hidden = items.length > 0;
    more.hidden = !next;
    if (problemBox.dataset.source === "lobby") showProblem(problemBox, null);
  } catch (error) {
    problemBox.dataset.source = "lobby";
    showProblem(problemBox, error);
  }
  timer = setTimeout(loadTables, REFRESH_MS);
}

// A list redrawn from the tables it shows, only when they changed (nothing moves under
// the keyboard, nothing is read out again); the keyboard's focus, when it was on one of
// them, moves to the same table's new item (or, the table gone, to the list), never to
// the page's top.
const drawn = new Map();
function redrawKeepingFocus(target, tables, item) {
  const signature = JSON.stringify([language(), tables]);
  if (drawn.get(target) === signature) return;
  drawn.set(target, signature);
  const focused = document.activeElement;
  const kept = focused && target.contains(focused) ? focused.closest("li[data-table]") : null;
  target.replaceChildren(...tables.map(item));
  if (!kept) return;
  const again = target.querySelector(`li[data-table="${CSS.escape(kept.dataset.table)}"] a`);
  if (again) again.focus();
  else target.focus();
}

// The ante range of the filters: whole numbers, or null.
function anteBound(name) {
  const raw = filters.elements.namedItem(name).value.trim();
  return /^[1-9][0-9]*$/.test(raw) ? raw : null;
}

// The lobby's query from the filters: ?game, cards, ante_min, ante_max, free_seats.
function filterQuery() {
  const query = new URLSearchParams({ limit: "20" });
  const game = filters.elements.namedItem("game").value;
  const cards = filters.elements.namedItem("cards").value;
  if (game) query.set("game", game);
  if (cards && game !== "paiute") query.set("cards", cards);
  if (anteBound("ante")) query.set("ante_min", anteBound("ante"));
  if (anteBound("ante_max")) query.set("ante_max", anteBound("ante_max"));
  if (filters.elements.namedItem("free_seat").checked) query.set("free_seats", "1");
  return query;
}

// A table like the filters say: their game (Guts without one) and cards; with an ante
// range, the ante of the first table listed that has a free seat and that game (the one
// the quick seat would join), else the range's lowest ante (its highest when only that
// is given), which a table made for the seat then has.
function wantedTable() {
  const game = filters.elements.namedItem("game").value || "guts";
  const table = { game };
  const cards = filters.elements.namedItem("cards").value;
  if (cards && game === "guts") table.cards = Number(cards);
  const bound = anteBound("ante") || anteBound("ante_max");
  if (bound) {
    const first = shownTables.find((t) => t.game === game && t.seats_free > 0
      && (!table.cards || t.options.cards === table.cards));
    table.ante = first ? first.options.ante : Number(bound);
  }
  return table;
}

// The signed-in player, or null after asking the visitor to sign in first.
function playerOrAsk(source) {
  const player = currentPlayer();
  if (!player) {
    problemBox.dataset.source = source;
    showProblem(problemBox, new ProblemError(401, { code: "missing_token" }));
    document.getElementById("sign-in").scrollIntoView();
  }
  return player;
}

function quickBuyIn() {
  return Number(quick.elements.namedItem("buy_in").value.trim());
}

// One tap: a new table of the chosen game, the player seated, two computer players
// beside them (docs/bots.md), then the table's page.
async function versusComputer(event) {
  event.preventDefault();
  const player = playerOrAsk("versus");
  if (!player) return;
  const button = versus.querySelector("button[type=submit]");
  const buyIn = quickBuyIn();
  button.disabled = true;
  try {
    const game = versus.elements.namedItem("game").value;
    const { table } = await api("POST", "/v1/tables", { body: { game }, token: player.key });
    const path = `/v1/tables/${encodeURIComponent(table.id)}`;
    await api("POST", `${path}/seats`, { body: { buy_in: buyIn }, token: player.key });
    for (const strategy of ["easy", "strong"]) {
      await api("POST", `${path}/bots`, { body: { strategy, buy_in: buyIn }, token: player.key });
    }
    window.location.assign(`/tables/${encodeURIComponent(table.id)}`);
  } catch (error) {
    if (keyRefused(error)) account.signedOut();
    problemBox.dataset.source = "versus";
    showProblem(problemBox, error);
    button.disabled = false;
    loadTables();
  }
}

async function quickSeat(event) {
  event.preventDefault();
  const button = quick.querySelector("button[type=submit]");
  const player = playerOrAsk("quick-seat");
  if (!player) return;
  problemBox.dataset.source = "quick-seat";
  const buyIn = quickBuyIn();
  button.disabled = true;
  try {
    const body = { table: wantedTable(), buy_in: buyIn };
    const seated = await api("POST", "/v1/tables/quick-seat", { body, token: player.key });
    window.location.assign(`/tables/${encodeURIComponent(seated.table.id)}`);
  } catch (error) {
    if (keyRefused(error)) account.signedOut();
    showProblem(problemBox, error);
    button.disabled = false;
  }
}

function selectedGame() {
  return form.querySelector("input[name=game]:checked").value;
}

function showGameOptions() {
  const game = selectedGame();
  document.getElementById("guts-options").hidden = game !== "guts";
  document.getElementById("paiute-options").hidden = game !== "paiute";
  const players = form.elements.namedItem("max_players");
  const limit = game === "guts" ? 10 : 5;
  players.max = String(limit);
  if (Number(players.value) > limit || players.dataset.touched !== "yes") players.value = String(limit);
}

function numberField(name, optional = false) {
  const input = form.querySelector(`[name=${name}]`);
  const raw = input.value.trim();
  if (raw === "") {
    if (optional) return undefined;
    const field = input.closest("label").firstChild.textContent.trim();
    throw new ProblemError(422, { code: "missing_field", field: name, detail: t("Fill in “{field}”.", { field }) });
  }
  const value = Number(raw);
  if (!Number.isInteger(value)) {
    const field = input.closest("label").firstChild.textContent.trim();
    throw new ProblemError(422, { code: "invalid_type", field: name, detail: t("“{field}” must be a whole number.", { field }) });
  }
  return value;
}

function createBody() {
  const game = selectedGame();
  const body = { game };
  const name = form.elements.namedItem("name").value.trim();
  if (name) body.name = name;
  for (const field of ["ante", "turn_seconds", "deal_pause_seconds", "max_players"]) {
    body[field] = numberField(field);
  }
  const options = document.getElementById(`${game}-options`);
  body.rebuy = options.querySelector("[name=rebuy]").checked;
  if (game === "guts") {
    body.cards = Number(form.elements.namedItem("cards").value);
    body.declare = form.elements.namedItem("declare").value;
    body.losers_pay = form.elements.namedItem("losers_pay").value;
    body.ante_mode = form.elements.namedItem("ante_mode").value;
    body.wimp = form.elements.namedItem("wimp").checked;
    body.ghost = form.elements.namedItem("ghost").checked;
    const cap = numberField("cap", true);
    if (cap !== undefined) body.cap = cap;
  } else {
    body.max_reshuffles = numberField("max_reshuffles");
  }
  return body;
}

function markField(field) {
  for (const input of form.querySelectorAll("[aria-invalid]")) input.removeAttribute("aria-invalid");
  if (!field) return;
  const input = form.querySelector(`[name=${CSS.escape(field)}]:not([type=radio])`);
  if (input && !input.closest("[hidden]")) {
    input.setAttribute("aria-invalid", "true");
    input.focus();
  }
}

async function create(event) {
  event.preventDefault();
  const button = form.querySelector("button[type=submit]");
  const player = playerOrAsk("create");
  if (!player) return;
  button.disabled = true;
  try {
    const { table } = await api("POST", "/v1/tables", { body: createBody(), token: player.key });
    window.location.assign(`/tables/${encodeURIComponent(table.id)}`);
  } catch (error) {
    if (keyRefused(error)) account.signedOut();
    problemBox.dataset.source = "create";
    showProblem(problemBox, error);
    markField(error instanceof ProblemError ? error.field : null);
    button.disabled = false;
  }
}

for (const radio of form.querySelectorAll("input[name=game]")) radio.addEventListener("change", showGameOptions);
form.elements.namedItem("max_players").addEventListener("input", (e) => {
  e.target.dataset.touched = "yes";
});
form.addEventListener("submit", create);
filters.addEventListener("change", () => {
  pages = 1;
  loadTables();
});
filters.addEventListener("submit", (event) => event.preventDefault());
quick.addEventListener("submit", quickSeat);
versus.addEventListener("submit", versusComputer);
// A link to a game's rules opens them, and the keyboard follows.
for (const link of document.querySelectorAll('a[href^="#how-"]')) {
  link.addEventListener("click", (event) => {
    const rules = document.querySelector(link.getAttribute("href"));
    if (!rules || rules.tagName !== "DETAILS") return;
    event.preventDefault();
    rules.open = true;
    rules.querySelector("summary").focus();
    rules.scrollIntoView();
  });
}
document.getElementById("refresh").addEventListener("click", loadTables);
// The next page's tables join the list; the keyboard goes on at the first of them.
more.addEventListener("click", async () => {
  const shown = list.children.length;
  pages += 1;
  await loadTables();
  const first = list.children[shown];
  if (first) first.querySelector("a").focus();
});
showGameOptions();
onLanguageChange(() => {
  translateStatic(WORDS);
  // NOTE: {in} and {out} are the Guts buttons' words: go in (play for the pot), or out.
  document.getElementById("guts-declare").textContent = t(
    "Each player then says {in} (plays for the pot) or {out} (drops the hand), all at once or in turn.",
    { in: t("In"), out: t("Out") },
  );
  document.title = t("cardroom: tables");
  loadTables();
});
