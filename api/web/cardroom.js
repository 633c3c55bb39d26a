// What both pages share: calls to the public HTTP API, errors in plain words, and
// building DOM nodes. Text always goes in through textContent, never as markup, so a
// player's name is shown exactly as typed and can never become part of the page. Every
// request asks for answers (problems, hand descriptions) in the page's language.
import { bdi, language, listOf, t, tn } from "./i18n.js";

export class ProblemError extends Error {
  constructor(status, problem) {
    super((problem && problem.detail) || `HTTP ${status}`);
    this.status = status;
    this.problem = problem || {};
    this.code = this.problem.code || "";
    this.field = this.problem.field || null;
  }
}

const RETRY_MS = 700;

function randomKey() {
  // crypto.randomUUID needs a secure context; getRandomValues works on plain http too.
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export async function api(method, path, { body, token } = {}) {
  const headers = { Accept: "application/json", "Accept-Language": language() };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers.Authorization = `Bearer ${token}`;
  const changes = method === "POST" || method === "DELETE";
  if (changes) headers["Idempotency-Key"] = randomKey();
  const init = {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
  };
  let response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    if (!changes) throw error;
    // The request may have landed and only its answer been lost: sent again with the
    // same Idempotency-Key, it is applied at most once and answers as the first did.
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    response = await fetch(path, init);
  }
  const text = await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!response.ok) {
    const problem = data && typeof data === "object" ? data : {};
    if (!problem.retry_after && response.headers.get("Retry-After")) {
      problem.retry_after = response.headers.get("Retry-After");
    }
    throw new ProblemError(response.status, problem);
  }
  return data;
}

// Codes whose own detail names internals (headers, tokens) get a sentence for people.
const PLAIN_WORDS = {
  invalid_token: () => t("Your player key no longer signs you in (it was revoked). Sign in again."),
  missing_token: () => t("Sign in first: pick a name, or paste your player key."),
  player_required: () => t("Sign in as a player first."),
  operator_required: () => t("Players here are created by the operator: paste the key you were given."),
  not_seated: () => t("You hold no seat at this table. Sit down to play."),
  wrong_seat: () => t("That seat is someone else's."),
  invalid_ticket: () => t("The live updates could not be opened; the page tries again."),
  stale_version: () => t("The table changed just now; look again and retry."),
  conflict: () => t("The table is busy right now; try again in a moment."),
  idempotency_in_progress: () => t("Your last move is still being processed; wait a moment."),
  store_unavailable: () => t("The table store cannot be reached right now; try again in a moment."),
  evaluator_unavailable: () => t("Hands cannot be ranked right now; the showdown completes as soon as possible."),
  internal_error: () => t("Something went wrong on the server; try again."),
  table_not_found: () => t("This table does not exist (or no longer exists)."),
  rate_limited: () => t("Too many requests: slow down a little."),
};

export function plainWords(error) {
  if (error instanceof ProblemError) {
    const plain = PLAIN_WORDS[error.code];
    let words = plain ? plain() : error.problem.detail || error.problem.title;
    if (!words) words = t("The server answered with status {status}.", { status: String(error.status) });
    if (error.code === "rate_limited" && error.problem.retry_after) {
      const seconds = Number(error.problem.retry_after);
      words += " " + tn("Try again in {n} second.", "Try again in {n} seconds.", seconds);
    }
    return words;
  }
  if (error instanceof TypeError) {
    return t("The server cannot be reached. Check your connection and try again.");
  }
  return String((error && error.message) || error);
}

export function showProblem(box, error) {
  if (!error) {
    box.hidden = true;
    box.textContent = "";
    return;
  }
  box.replaceChildren(
    el("strong", { text: t("Sorry:") }),
    " ",
    document.createTextNode(plainWords(error)),
  );
  box.hidden = false;
}

export function el(tag, options = {}, children = []) {
  const node = document.createElement(tag);
  if (options.class) node.className = options.class;
  if (options.text !== undefined && options.text !== null) node.textContent = String(options.text);
  for (const [name, value] of Object.entries(options.attrs || {})) {
    if (value === false || value === null || value === undefined) continue;
    node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const [name, handler] of Object.entries(options.on || {})) {
    node.addEventListener(name, handler);
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const SUITS = { c: ["♣", "black"], d: ["♦", "red"], h: ["♥", "red"], s: ["♠", "black"] };

export function cardLabel(code) {
  const rank = code.slice(0, -1).toUpperCase();
  const suit = SUITS[code.slice(-1).toLowerCase()];
  return `${rank === "T" ? "10" : rank}${suit ? suit[0] : "?"}`;
}

// A card's name for a screen reader and a tooltip, in the reader's words.
export function cardName(code) {
  const rank = code.slice(0, -1).toUpperCase();
  const suit = code.slice(-1).toLowerCase();
  const ranks = {
    A: () => t("ace"), K: () => t("king"), Q: () => t("queen"), J: () => t("jack"), T: () => "10",
  };
  const rankName = ranks[rank] ? ranks[rank]() : rank;
  switch (suit) {
    // NOTE: {rank} is "ace", "king", "queen", "jack" or a number from 2 to 10.
    case "c": return t("{rank} of clubs", { rank: rankName });
    case "d": return t("{rank} of diamonds", { rank: rankName });
    case "h": return t("{rank} of hearts", { rank: rankName });
    case "s": return t("{rank} of spades", { rank: rankName });
    default: return rankName;
  }
}

// A card named in a sentence ("Discard 10♠"): it keeps its left-to-right order in a
// right-to-left sentence.
export function cardWord(code) {
  return el("span", { class: "card-word", text: cardLabel(code), attrs: { dir: "ltr" } });
}

export function cardNode(code, tag = "span", extra = {}) {
  const suit = SUITS[code.slice(-1).toLowerCase()];
  const node = el(tag, {
    class: `card ${suit ? suit[1] : ""} ${extra.class || ""}`.trim(),
    text: cardLabel(code),
    // A card reads left to right in every language: 10♠, never ♠10.
    attrs: { "data-card": code, title: cardName(code), dir: "ltr", ...(extra.attrs || {}) },
    on: extra.on || {},
  });
  return node;
}

export function cardBack() {
  return el("span", { class: "card back", attrs: { "aria-hidden": "true" } });
}

// "3-card Guts": the game keeps its name in every language.
export function gutsName(cards) {
  return tn("{n}-card Guts", "{n}-card Guts", cards);
}

// Players' names in a sentence: each set apart in a <bdi>, joined as the reader joins them.
export function listNames(names) {
  return listOf(names.map((name) => bdi(name)));
}
