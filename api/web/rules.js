// "How to play": the rules of the table's game in a few sentences, in the reader's
// language, with this table's options in words (docs/rules.md says them in full), and
// Paiute's winning combinations with an example of each.
import { cardNode, el } from "./cardroom.js";
import { number, t, tn } from "./i18n.js";

// The rank of a card ("Th" -> 10, "Ah" -> 14).
export function rankOf(code) {
  const rank = code.slice(0, -1).toUpperCase();
  return { T: 10, J: 11, Q: 12, K: 13, A: 14 }[rank] || Number(rank);
}

function list(items) {
  return el("ul", { class: "rules-list" }, items.filter(Boolean).map((item) => el("li", {}, [item])));
}

function chipsWords(n) {
  return tn("{n} chip", "{n} chips", n);
}

function gutsRules(options) {
  const declare = options.declare === "sequential"
    ? t("Players decide in turn, from the dealer's left, each seeing the choices before theirs.")
    : t("Everybody decides at once and in secret; the choices are shown together. No answer in time counts as out.");
  const ranking = options.cards === 2
    ? t("A pair beats two unequal cards; a higher pair beats a lower one; otherwise the higher card wins.")
    : t("Best hands first: straight flush, three of a kind, straight, flush, pair, high card.");
  const ante = options.ante_mode === "every_deal"
    ? t("Everyone antes {chips} every deal, except a player who matched the pot in the deal before.", {
      chips: chipsWords(options.ante),
    })
    : t("Everyone antes {chips} when the pot is empty, at the start of a game.", { chips: chipsWords(options.ante) });
  const losers = options.losers_pay === "worst"
    ? t("Two or more in: the best hand takes the pot, and only the worst hand in pays the pot as it stood.")
    : t("Two or more in: the best hand takes the pot, and every other player in pays the pot as it stood (they match the pot).");
  let nobody = t("Nobody in: the pot stays for the next deal.");
  if (options.wimp) nobody = t("Nobody in: the best hand pays one ante for each other player (the wimp rule).");
  else if (options.all_out_ante) nobody = t("Nobody in: the pot stays, and everyone antes again at the next deal.");
  let cap = null;
  if (options.cap !== null && options.cap !== undefined) {
    cap = options.cap_mode === "reserve"
      ? t("The pot never holds more than {cap}: the rest goes to a reserve that opens the next game's pot.", {
        cap: chipsWords(options.cap),
      })
      : t("Nobody wins or pays more than {cap} in one deal.", { cap: chipsWords(options.cap) });
  }
  return [
    t("Each player gets {n} cards and decides: In, to play for the pot, or Out, to drop the hand.", { n: options.cards }),
    declare,
    t("Only one in: that player takes the pot without showing."),
    losers,
    nobody,
    options.ghost ? t("A ghost hand is dealt to nobody: to win, a player in must beat it too.") : null,
    cap,
    ranking,
    ante,
    t("A game ends when a deal's winner empties the pot; the next game starts after the pause."),
  ];
}

// Each combination with an example hand; five of a kind needs a wild card (its place
// holds the deal's wild card, or a two when no deal is on).
function combinations(wildCard) {
  const shown = wildCard || "2c";
  // a live wild card: of the wild rank, not the one turned up (out of play)
  const wild = shown.slice(0, -1) + (shown.endsWith("s") ? "h" : "s");
  const four = rankOf(wild) === 9 ? "K" : "9";
  const example = [
    // NOTE: Paiute's winning combinations, best first; each is shown with an example hand.
    [t("Five of a kind, with a wild card"), [`${four}s`, `${four}h`, `${four}d`, `${four}c`, wild]],
    [t("Royal flush: A K Q J 10 of one suit"), ["Ah", "Kh", "Qh", "Jh", "Th"]],
    [t("Straight flush: five in sequence, one suit"), ["9c", "8c", "7c", "6c", "5c"]],
    [t("Four and two (six cards)"), ["Qs", "Qh", "Qd", "Qc", "4s", "4h"]],
    [t("Three and three (six cards)"), ["8s", "8h", "8d", "3c", "3d", "3h"]],
    [t("Two, two and two (six cards): three pairs"), ["Ks", "Kd", "6h", "6c", "5s", "5d"]],
  ];
  return el("ol", { class: "combinations" }, example.map(([name, cards], i) => el("li", {}, [
    el("span", { class: "combination", text: name }),
    el("span", { class: "cards small", attrs: { dir: "ltr" } },
      cards.map((code, at) => wildNode(code, i === 0 && at === 4))),
  ])));
}

// A card, marked when it is wild: a star on its face, and "wild" in its name.
export function wildNode(code, wild, tag = "span", extra = {}) {
  const node = cardNode(code, tag, extra);
  if (wild) {
    node.classList.add("is-wild");
    // NOTE: a wild card's name for screen readers: "seven of hearts, wild".
    node.setAttribute("aria-label", t("{card}, wild", { card: node.title }));
    // a card that is not a button is named as an image, which may carry a name
    if (tag !== "button") node.setAttribute("role", "img");
    node.title = node.getAttribute("aria-label");
  }
  return node;
}

function paiuteRules(options, deal) {
  return [
    t("Each player gets five cards. The next card is turned up: every card of its rank is wild and stands for any card."),
    t("On your turn, draw a card (from the stock, or the top of the discard pile), then discard one. A card taken from the pile cannot be discarded in the same turn."),
    t("Holding a winning combination after drawing, you may call: show five or six cards. Each player after you, up to the dealer, gets one last turn to lay down a combination; then the best wins the pot."),
    t("Everyone antes {chips} before each deal.", { chips: chipsWords(options.ante) }),
    tn("No call after {n} reshuffle of the discard pile: the deal is void and the pot carries over.",
      "No call after {n} reshuffles of the discard pile: the deal is void and the pot carries over.",
      options.max_reshuffles),
    // a node, not a string: the list of combinations
    el("span", {}, [t("Winning combinations, best first:"), combinations(deal && deal.wild_card)]),
  ];
}

// The panel's content for this table.
export function rulesFor(table) {
  const options = table.options;
  const rules = table.game === "guts" ? gutsRules(options) : paiuteRules(options, table.deal);
  const common = [
    tn("{n} second for each decision.", "{n} seconds for each decision.", options.turn_seconds),
    t("Buy-in: {min} to {max} chips.", { min: number(options.min_buy_in), max: number(options.max_buy_in) }),
    options.rebuy ? t("Out of chips, you may buy more.") : t("No rebuys at this table."),
  ];
  return [list(rules), el("h3", { text: t("At this table") }), list(common)];
}
