// The lobby: who is signed in, the player's own tables (GET /v1/players/me/seats), every
// table, newest first, refreshed every few seconds, and the form that creates a table
// through POST /v1/tables (as the signed-in player).
import { currentPlayer, keyRefused, mountAccount } from "./account.js";
import { api, el, gutsName, ProblemError, showProblem } from "./cardroom.js";
import { bdi, onLanguageChange, t, tn, translateStatic } from "./i18n.js";

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
  "tables-empty": () => t("No tables yet: create the first one below."),
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
let pages = 1;
let timer = null;
const account = mountAccount(() => loadTables());

function summary(table) {
  const o = table.options || {};
  if (table.game === "guts") {
    const parts = [gutsName(o.cards), t("ante {n}", { n: o.ante })];
    parts.push(o.declare === "sequential" ? t("declare in turn") : t("declare at once"));
    if (o.losers_pay === "worst") parts.push(t("worst hand pays"));
    if (o.wimp) parts.push(t("wimp"));
    if (o.ghost) parts.push(t("ghost"));
    if (o.cap) parts.push(t("cap {n}", { n: o.cap }));
    return parts.join(" · ");
  }
  const reshuffles = tn("{n} reshuffle", "{n} reshuffles", o.max_reshuffles);
  return [t("Paiute"), t("ante {n}", { n: o.ante }), reshuffles].join(" · ");
}

function tableItem(table) {
  const link = el("a", { class: "table-link", attrs: { href: `/tables/${encodeURIComponent(table.id)}` } }, [
    el("bdi", { class: "table-name", text: table.name }),
    el("span", { class: "table-summary", text: summary(table) }),
    el("span", { class: "table-seats" }, [
      el("span", { class: `tag ${table.game}`, text: table.game === "guts" ? t("Guts") : t("Paiute") }),
      el("span", { text: [tn("{n} seated", "{n} seated", table.seats_taken), tn("{n} free", "{n} free", table.seats_free)].join(" · ") }),
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
    document.getElementById("my-tables").replaceChildren(...body.seats.map(myTableItem));
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
      const query = cursor ? `?limit=20&cursor=${encodeURIComponent(cursor)}` : "?limit=20";
      const body = await api("GET", `/v1/tables${query}`);
      items.push(...body.tables);
      next = body.next_cursor;
      if (!next) break;
      cursor = next;
    }
    list.replaceChildren(...items.map(tableItem));
    empty.hidden = items.length > 0;
    more.hidden = !next;
    if (problemBox.dataset.source === "lobby") showProblem(problemBox, null);
  } catch (error) {
    problemBox.dataset.source = "lobby";
    showProblem(problemBox, error);
  }
  timer = setTimeout(loadTables, REFRESH_MS);
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
  const player = currentPlayer();
  if (!player) {
    problemBox.dataset.source = "create";
    showProblem(problemBox, new ProblemError(401, { code: "missing_token" }));
    document.getElementById("sign-in").scrollIntoView();
    return;
  }
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
document.getElementById("refresh").addEventListener("click", loadTables);
more.addEventListener("click", () => {
  pages += 1;
  loadTables();
});
showGameOptions();
onLanguageChange(() => {
  translateStatic(WORDS);
  document.title = t("cardroom: tables");
  loadTables();
});
