// The pages' words in the reader's language: Kiswahili, Pashto, Hungarian, Estonian or
// English. Every sentence a person reads goes through t("…", {params}) or
// tn("one …", "{n} …", n, {params}); `make messages` extracts those calls into
// api/i18n/page.pot, translators fill api/i18n/locales/<lang>/LC_MESSAGES/page.po,
// and the gateway serves one language's catalogue as JSON at /web/i18n/<lang>.json.
//
// The language is the one picked on the page (kept in localStorage under "cardroom.lang"),
// else the first of the browser's languages the pages speak, else English. The catalogue
// is loaded before the page's own script runs (this module awaits it), so the first
// drawing is already in the right language; a change of language redraws in place.

export const LANGUAGES = { sw: "Kiswahili", ps: "پښتو", hu: "Magyar", et: "Eesti", en: "English" };
const STORE_KEY = "cardroom.lang";
const ENGLISH = { lang: "en", dir: "ltr", plural: { one: 0, other: 1 }, messages: {} };
const PLACEHOLDER = /\{([a-z_]+)\}/g;

let catalog = ENGLISH;
let plurals = new Intl.PluralRules("en");
let numbers = new Intl.NumberFormat("en");
const changed = [];

function saved() {
  try {
    return window.localStorage.getItem(STORE_KEY);
  } catch {
    return null;
  }
}

// The first of the browser's languages the pages speak (English if none): the language
// the gateway answers a request in when the page cannot set Accept-Language itself (an
// EventSource sends the browser's own).
export function browserLanguage() {
  for (const tag of navigator.languages || [navigator.language || "en"]) {
    const base = String(tag).toLowerCase().split("-")[0];
    if (base in LANGUAGES) return base;
  }
  return "en";
}

// The language to show: the one picked here before, else the browser's.
export function chooseLanguage() {
  const picked = saved();
  return picked && picked in LANGUAGES ? picked : browserLanguage();
}

async function load(lang) {
  if (lang === "en") return ENGLISH;
  try {
    const response = await fetch(`/web/i18n/${lang}.json`, { headers: { Accept: "application/json" } });
    if (response.ok) return await response.json();
  } catch {
    // without its catalogue the page still works, in English
  }
  return ENGLISH;
}

function use(next) {
  catalog = next;
  const lang = catalog.lang in LANGUAGES ? catalog.lang : "en";
  plurals = new Intl.PluralRules(lang);
  numbers = new Intl.NumberFormat(lang);
  document.documentElement.lang = lang;
  document.documentElement.dir = catalog.dir === "rtl" ? "rtl" : "ltr";
}

export function language() {
  return catalog.lang;
}

// A number as the reader writes it (digits, grouping).
export function number(value) {
  return typeof value === "number" ? numbers.format(value) : String(value);
}

// A name (a player's, a table's) set apart from the sentence around it, so that a name
// written in another direction does not reorder the words around it.
export function bdi(text) {
  const node = document.createElement("bdi");
  node.textContent = String(text);
  return node;
}

// The sentence with its {placeholders} filled: a string, or nodes when a value is a node
// (a <bdi> name, a list of names), so that those stay nodes in the page.
function fill(text, params) {
  const values = Object.values(params);
  if (!values.some((value) => value instanceof Node)) {
    return text.replace(PLACEHOLDER, (whole, name) => (name in params ? number(params[name]) : whole));
  }
  const fragment = document.createDocumentFragment();
  let at = 0;
  for (const match of text.matchAll(PLACEHOLDER)) {
    fragment.append(text.slice(at, match.index));
    const value = match[1] in params ? params[match[1]] : match[0];
    fragment.append(value instanceof Node ? value : number(value));
    at = match.index + match[0].length;
  }
  fragment.append(text.slice(at));
  return fragment;
}

export function t(msgid, params = {}) {
  const found = catalog.messages[msgid];
  return fill(typeof found === "string" && found ? found : msgid, params);
}

export function tn(singular, plural, n, params = {}) {
  const category = plurals.select(n);
  const found = catalog.messages[singular];
  let text = null;
  if (Array.isArray(found)) {
    const index = category in catalog.plural ? catalog.plural[category] : catalog.plural.other;
    text = found[index] || found[found.length - 1] || null;
  }
  if (!text) text = category === "one" ? singular : plural;
  return fill(text, { n, ...params });
}

// "a, b and c" as the reader says it; nodes stay nodes.
export function listOf(items) {
  const marks = items.map((_, i) => `\u0000${i}\u0000`);
  const parts = new Intl.ListFormat(catalog.lang, { type: "conjunction" }).formatToParts(marks);
  if (!items.some((item) => item instanceof Node)) {
    return parts.map((part) => (part.type === "element" ? items[marks.indexOf(part.value)] : part.value)).join("");
  }
  const fragment = document.createDocumentFragment();
  for (const part of parts) {
    fragment.append(part.type === "element" ? items[marks.indexOf(part.value)] : part.value);
  }
  return fragment;
}

// Fill the page's fixed text: each element with data-l10n="key" gets words[key]() as its
// text, or as the attribute data-l10n-attr names (placeholder, aria-label...).
export function translateStatic(words) {
  for (const node of document.querySelectorAll("[data-l10n]")) {
    const say = words[node.dataset.l10n];
    if (!say) continue;
    const attr = node.dataset.l10nAttr;
    if (attr) node.setAttribute(attr, say());
    else node.textContent = say();
  }
}

// Call `redraw` after every change of language (and once now the catalogue is loaded).
export function onLanguageChange(redraw) {
  changed.push(redraw);
  redraw();
}

async function switchTo(lang) {
  try {
    window.localStorage.setItem(STORE_KEY, lang);
  } catch {
    // not remembered, but shown
  }
  use(await load(lang));
  for (const redraw of changed) redraw();
}

// The picker in the page's header: each language named in itself.
function mountPicker() {
  const picker = document.getElementById("language");
  if (!picker) return;
  picker.replaceChildren(
    ...Object.entries(LANGUAGES).map(([code, name]) => {
      const option = document.createElement("option");
      option.value = code;
      option.lang = code;
      option.textContent = name;
      return option;
    }),
  );
  picker.value = catalog.lang;
  picker.addEventListener("change", () => switchTo(picker.value));
  const redraw = () => {
    picker.value = catalog.lang;
    picker.setAttribute("aria-label", t("Language"));
    picker.title = t("Language");
  };
  changed.push(redraw);
  redraw();
}

use(await load(chooseLanguage()));
mountPicker();
