// The player's limits and breaks, the one menu of both the lobby and the table page
// (docs/players.md): deposit, buy-in and loss limits over 24 hours, 7 days and 30 days with their waiting increases and the
// confirmation of one (/v1/players/me/limits), the session's time limit and reality
// checks (/v1/players/me/session), a time-out of 1 to 30 days and a self-exclusion
// (/v1/players/me/exclusions). The API decides every rule; a refusal is shown as the API
// words it, in the page's language.
import { keyRefused } from "./account.js";
import { api, el, ProblemError, showProblem } from "./cardroom.js";
import { language, onLanguageChange, t, tn, translateStatic } from "./i18n.js";

const KINDS = {
  deposit: () => t("Deposits"),
  // NOTE: a limit's kind: the chips a player sits down with, rebuys included.
  buy_in: () => t("Buy-ins"),
  loss: () => t("Losses"),
};
const WINDOWS = { "24h": () => t("24 hours"), "7d": () => t("7 days"), "30d": () => t("30 days") };

// The menu's fixed words.
const WORDS = {
  // NOTE: the title of the player's menu of limits, session settings, time-outs and
  // self-exclusion.
  "menu-title": () => t("Limits and breaks"),
  "limits-title": () => t("My limits"),
  "limits-hint": () =>
    t("A lower limit applies at once; a higher one, or none, applies only once its waiting time is over and you confirm it."),
  "limit-kind": () => t("What it limits"),
  "kind-deposit": KINDS.deposit,
  "kind-buy-in": KINDS.buy_in,
  "kind-loss": KINDS.loss,
  // NOTE: the rolling window a limit counts over: "Over" 24 hours, 7 days, 30 days.
  "limit-window": () => t("Over"),
  "window-24h": WINDOWS["24h"],
  "window-7d": WINDOWS["7d"],
  "window-30d": WINDOWS["30d"],
  "limit-amount": () => t("Chips"),
  "limit-none-hint": () => t("(empty: no limit)"),
  "set-limit": () => t("Set the limit"),
  "session-title": () => t("My sessions"),
  "session-limit": () => t("Minutes a session"),
  // NOTE: a reality check: a reminder, every so many minutes, of the time played and
  // the result so far.
  "reality-check": () => t("Remind me every (minutes)"),
  optional: () => t("(optional)"),
  "save-session": () => t("Save"),
  "break-title": () => t("Take a break"),
  "time-out-days": () => t("Days away (1 to 30)"),
  "take-time-out": () => t("Take a time-out"),
  "exclude-for": () => t("Exclude me for"),
  "months-6": () => tn("{n} month", "{n} months", 6),
  "months-12": () => tn("{n} month", "{n} months", 12),
  "months-24": () => tn("{n} month", "{n} months", 24),
  "months-60": () => tn("{n} month", "{n} months", 60),
  "for-good": () => t("For good"),
  "exclude-sure": () => t("I understand that it cannot be shortened, and that I leave my tables now."),
  "exclude-me": () => t("Exclude me"),
};

// A moment (Unix seconds) as the reader writes a date and time.
function when(seconds) {
  return new Intl.DateTimeFormat(language(), { dateStyle: "medium", timeStyle: "short" }).format(
    new Date(seconds * 1000),
  );
}

// A field's whole number, or null when it is empty; anything else goes to the API as
// typed, which refuses it in the reader's words.
function amountOrNull(input) {
  const raw = input.value.trim();
  return raw === "" ? null : Number(raw);
}

// The menu itself, the same on every page; its words are filled in the page's language.
const MARKUP = `
  <h2 id="menu-title" data-l10n="menu-title">Limits and breaks</h2>
  <div id="menu-problem" class="problem" role="alert" hidden></div>
  <p id="menu-done" class="muted" role="status"></p>
  <details id="limits-part">
    <summary data-l10n="limits-title">My limits</summary>
    <p class="muted" data-l10n="limits-hint">A lower limit applies at once; a higher one, or none, applies only once its waiting time is over and you confirm it.</p>
    <ul id="limits" class="limits"></ul>
    <form id="limit-form" class="grid" novalidate>
      <label><span data-l10n="limit-kind">What it limits</span>
        <select name="kind">
          <option value="deposit" data-l10n="kind-deposit">Deposits</option>
          <option value="buy_in" selected data-l10n="kind-buy-in">Buy-ins</option>
          <option value="loss" data-l10n="kind-loss">Losses</option>
        </select>
      </label>
      <label><span data-l10n="limit-window">Over</span>
        <select name="window">
          <option value="24h" selected data-l10n="window-24h">24 hours</option>
          <option value="7d" data-l10n="window-7d">7 days</option>
          <option value="30d" data-l10n="window-30d">30 days</option>
        </select>
      </label>
      <label><span data-l10n="limit-amount">Chips</span> <span class="muted" data-l10n="limit-none-hint">(empty: no limit)</span>
        <input name="amount" type="number" min="0" step="1" inputmode="numeric">
      </label>
      <button type="submit" class="secondary" data-l10n="set-limit">Set the limit</button>
    </form>
  </details>
  <details id="session-part">
    <summary data-l10n="session-title">My sessions</summary>
    <p id="session-now" class="muted"></p>
    <ul id="session-pending" class="limits"></ul>
    <form id="session-form" class="grid" novalidate>
      <label><span data-l10n="session-limit">Minutes a session</span> <span class="muted" data-l10n="limit-none-hint">(empty: no limit)</span>
        <input name="limit_minutes" type="number" min="1" max="1440" step="1" inputmode="numeric">
      </label>
      <label><span data-l10n="reality-check">Remind me every (minutes)</span> <span class="muted" data-l10n="optional">(optional)</span>
        <input name="reality_check_minutes" type="number" min="1" max="240" step="1" inputmode="numeric">
      </label>
      <button type="submit" class="secondary" data-l10n="save-session">Save</button>
    </form>
  </details>
  <details id="break-part">
    <summary data-l10n="break-title">Take a break</summary>
    <p id="exclusion-now" class="muted"></p>
    <form id="time-out-form" class="grid" novalidate>
      <label><span data-l10n="time-out-days">Days away (1 to 30)</span>
        <input name="days" type="number" min="1" max="30" step="1" value="1" inputmode="numeric">
      </label>
      <button type="submit" class="secondary" data-l10n="take-time-out">Take a time-out</button>
    </form>
    <form id="exclude-form" class="grid" novalidate>
      <label><span data-l10n="exclude-for">Exclude me for</span>
        <select name="months">
          <option value="6" selected data-l10n="months-6">6 months</option>
          <option value="12" data-l10n="months-12">12 months</option>
          <option value="24" data-l10n="months-24">24 months</option>
          <option value="60" data-l10n="months-60">60 months</option>
          <option value="permanent" data-l10n="for-good">For good</option>
        </select>
      </label>
      <label class="check"><input type="checkbox" name="sure"> <span data-l10n="exclude-sure">I understand that it cannot be shortened, and that I leave my tables now.</span></label>
      <button type="submit" class="danger" data-l10n="exclude-me">Exclude me</button>
    </form>
  </details>`;

// Draw the menu into `root` (#player-menu, hidden while nobody is signed in) and run it
// with the key `key()` gives (none: nobody signed in); `changed()` after a break is taken
// (the player's seats were left).
export function mountCare(root, key, changed) {
  root.innerHTML = MARKUP;
  const $ = (id) => root.querySelector(`#${id}`);
  const problemBox = $("menu-problem");
  const done = $("menu-done");
  const limitForm = $("limit-form");
  const sessionForm = $("session-form");
  const timeOutForm = $("time-out-form");
  const excludeForm = $("exclude-form");
  let shown = { limits: null, session: null, exclusion: null };

  function limitItem(limit) {
    const name = `${KINDS[limit.kind]()} · ${WINDOWS[limit.window]()}`;
    const parts = [el("strong", { text: name })];
    if (limit.amount !== null) {
      parts.push(
        el("span", { text: tn("at most {n} chip", "at most {n} chips", limit.amount) }),
        el("span", { class: "muted", text: tn("{n} left", "{n} left", limit.left ?? 0) }),
      );
    }
    const pending = limit.pending;
    if (pending) {
      const asked = pending.amount === null
        ? t("No limit asked for, from {when}", { when: when(pending.from_at) })
        : tn("{n} asked for, from {when}", "{n} asked for, from {when}", pending.amount, { when: when(pending.from_at) });
      parts.push(el("span", { class: "pending", text: asked }));
      parts.push(el("button", {
        class: "quiet", text: t("Confirm"),
        attrs: {
          type: "button", "data-confirm": `${limit.kind}:${limit.window}`,
          "aria-label": t("Confirm: {limit}", { limit: name }),
        },
        on: { click: () => confirmLimit(limit.kind, limit.window) },
      }));
    }
    return el("li", { attrs: { "data-limit": `${limit.kind}:${limit.window}` } }, parts);
  }

  function drawLimits() {
    const list = $("limits");
    const set = (shown.limits || []).filter((limit) => limit.amount !== null || limit.pending);
    const focused = document.activeElement && list.contains(document.activeElement)
      ? document.activeElement.dataset.confirm : null;
    list.replaceChildren(
      ...(set.length ? set.map(limitItem) : [el("li", { class: "muted", text: t("No limit set.") })]),
    );
    if (focused) (list.querySelector(`[data-confirm="${focused}"]`) || list).focus();
  }

  function drawSession() {
    const session = shown.session;
    if (!session) return;
    const parts = [
      session.limit_minutes === null
        ? t("No time limit")
        : tn("At most {n} minute a session", "At most {n} minutes a session", session.limit_minutes),
      session.reality_check_minutes === null
        ? t("no reminders")
        : tn("a reminder every {n} minute", "a reminder every {n} minutes", session.reality_check_minutes),
    ];
    if (session.blocked_until) parts.push(t("no seat until {when}", { when: when(session.blocked_until) }));
    $("session-now").textContent = parts.join(" · ");
    const list = $("session-pending");
    const focused = document.activeElement && list.contains(document.activeElement)
      ? document.activeElement.dataset.confirm : null;
    list.replaceChildren(...Object.entries(session.pending || {}).map(([setting, waiting]) => pendingSetting(setting, waiting)));
    if (focused) (list.querySelector(`[data-confirm="${focused}"]`) || list).focus();
  }

  // A looser session setting waiting for its confirmation, with the button that confirms it.
  function pendingSetting(setting, waiting) {
    const from = when(waiting.from_at);
    const limit = setting === "limit_minutes";
    let asked;
    if (waiting.value === null) {
      asked = limit ? t("No time limit, from {when}", { when: from }) : t("No reminders, from {when}", { when: from });
    } else if (limit) {
      asked = tn("At most {n} minute a session, from {when}", "At most {n} minutes a session, from {when}", waiting.value, { when: from });
    } else {
      asked = tn("A reminder every {n} minute, from {when}", "A reminder every {n} minutes, from {when}", waiting.value, { when: from });
    }
    const name = limit ? WORDS["session-limit"]() : WORDS["reality-check"]();
    return el("li", { attrs: { "data-setting": setting } }, [
      el("span", { class: "pending", text: asked }),
      el("button", {
        class: "quiet", text: t("Confirm"),
        attrs: { type: "button", "data-confirm": setting, "aria-label": t("Confirm: {limit}", { limit: name }) },
        on: { click: () => confirmSetting(setting) },
      }),
    ]);
  }

  async function confirmSetting(setting) {
    await send("/v1/players/me/session/confirmations", { setting }, null, (session) => {
      shown.session = session;
      drawSession();
      succeeded(t("Saved: your next seats follow it."));
    });
  }

  function drawExclusion() {
    const state = shown.exclusion;
    if (!state) return;
    const exclusion = state.exclusion;
    let words = t("No time-out or exclusion runs.");
    if (state.active && exclusion.kind === "time_out") {
      words = t("You are on a time-out until {when}.", { when: when(exclusion.until) });
    } else if (state.active && exclusion.until === null) {
      words = t("You have excluded yourself for good.");
    } else if (state.active) {
      words = t("You have excluded yourself until {when}.", { when: when(exclusion.until) });
    }
    $("exclusion-now").textContent = words;
  }

  function draw() {
    drawLimits();
    drawSession();
    drawExclusion();
  }

  function failed(error) {
    if (keyRefused(error)) {
      root.hidden = true;
      return;
    }
    done.textContent = "";
    showProblem(problemBox, error);
  }

  function succeeded(words) {
    showProblem(problemBox, null);
    done.textContent = words;
  }

  async function refresh() {
    const token = key();
    if (!token) {
      root.hidden = true;
      return;
    }
    try {
      const [limits, session, exclusion] = await Promise.all([
        api("GET", "/v1/players/me/limits", { token }),
        api("GET", "/v1/players/me/session", { token }),
        api("GET", "/v1/players/me/exclusions", { token }),
      ]);
      const first = shown.session === null;
      shown = { limits: limits.limits, session, exclusion };
      if (first) {
        sessionForm.elements.namedItem("limit_minutes").value = session.limit_minutes ?? "";
        sessionForm.elements.namedItem("reality_check_minutes").value = session.reality_check_minutes ?? "";
      }
      root.hidden = false;
      draw();
    } catch (error) {
      failed(error);
    }
  }

  // Send one change with the player's key; `after(answer)` on success.
  async function send(path, body, button, after) {
    const token = key();
    if (!token) return;
    if (button) button.disabled = true;
    try {
      after(await api("POST", path, { body, token }));
    } catch (error) {
      failed(error);
    } finally {
      if (button) button.disabled = false;
    }
  }

  async function confirmLimit(kind, window) {
    await send("/v1/players/me/limits/confirmations", { kind, window }, null, (answer) => {
      shown.limits = answer.limits;
      drawLimits();
      succeeded(t("The limit applies now."));
    });
  }

  limitForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const body = {
      kind: limitForm.elements.namedItem("kind").value,
      window: limitForm.elements.namedItem("window").value,
      amount: amountOrNull(limitForm.elements.namedItem("amount")),
    };
    send("/v1/players/me/limits", body, limitForm.querySelector("button"), (answer) => {
      shown.limits = answer.limits;
      drawLimits();
      const changed = answer.limits.find((l) => l.kind === body.kind && l.window === body.window);
      succeeded(answer.applied || !changed || !changed.pending
        ? t("The limit applies now.")
        : t("The change waits until {when}: then confirm it here, and it applies.", { when: when(changed.pending.from_at) }));
    });
  });

  sessionForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const body = {
      limit_minutes: amountOrNull(sessionForm.elements.namedItem("limit_minutes")),
      reality_check_minutes: amountOrNull(sessionForm.elements.namedItem("reality_check_minutes")),
    };
    send("/v1/players/me/session", body, sessionForm.querySelector("button"), (session) => {
      shown.session = session;
      drawSession();
      const waiting = Object.values(session.pending || {}).map((pending) => pending.from_at);
      succeeded(session.applied !== false || !waiting.length
        ? t("Saved: your next seats follow it.")
        : t("The change waits until {when}: then confirm it here, and it applies.", { when: when(Math.max(...waiting)) }));
    });
  });

  function excluded(answer) {
    shown.exclusion = { exclusion: answer.exclusion, active: answer.active };
    drawExclusion();
    succeeded(t("Done: your seats are left and cashed out, now or after their deal."));
    changed();
  }

  timeOutForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const days = amountOrNull(timeOutForm.elements.namedItem("days"));
    const body = { kind: "time_out", days: days ?? 0 };
    send("/v1/players/me/exclusions", body, timeOutForm.querySelector("button"), excluded);
  });

  excludeForm.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!excludeForm.elements.namedItem("sure").checked) {
      done.textContent = "";
      const detail = t("Tick the box first: a self-exclusion cannot be shortened.");
      showProblem(problemBox, new ProblemError(422, { detail }));
      excludeForm.elements.namedItem("sure").focus();
      return;
    }
    const months = excludeForm.elements.namedItem("months").value;
    const body = months === "permanent"
      ? { kind: "self_exclusion", permanent: true }
      : { kind: "self_exclusion", months: Number(months) };
    send("/v1/players/me/exclusions", body, excludeForm.querySelector("button"), excluded);
  });

  onLanguageChange(() => {
    translateStatic(WORDS);
    if (shown.limits) draw();
  });
  return { refresh };
}
