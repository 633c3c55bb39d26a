// Who is playing: the player's key, kept in localStorage under "cardroom.player", and
// the header and the sign-in panel both pages share.
//
// In open mode (PLAYERS_MODE=open) a visitor picks a name and the page creates a player
// (POST /v1/players); in operator mode only the operator creates players, and the
// visitor pastes the key they were given. Either way the same key signs in on another
// device. The page is told the mode by its <meta name="cardroom-players-mode">. A page
// with a #keep-key panel (the lobby) offers a new player to keep their key: copied, or
// downloaded as a file, since clearing the browser's data loses it and the wallet with it.
import { api, el, ProblemError, showProblem } from "./cardroom.js";
import { bdi, onLanguageChange, t, tn, translateStatic } from "./i18n.js";

const STORE_KEY = "cardroom.player";

export function playersMode() {
  const meta = document.querySelector('meta[name="cardroom-players-mode"]');
  return meta && meta.content === "operator" ? "operator" : "open";
}

export function currentPlayer() {
  try {
    const saved = JSON.parse(window.localStorage.getItem(STORE_KEY) || "null");
    if (saved && typeof saved.key === "string" && typeof saved.id === "string") return saved;
  } catch {
    // a damaged entry is as good as none
  }
  return null;
}

function keep(player) {
  window.localStorage.setItem(STORE_KEY, JSON.stringify(player));
}

export function forgetPlayer() {
  window.localStorage.removeItem(STORE_KEY);
}

// A code that says the stored key no longer signs in (revoked, or never valid).
export function keyRefused(error) {
  return error instanceof ProblemError && (error.code === "invalid_token" || error.code === "missing_token");
}

async function signInWithKey(key) {
  const me = await api("GET", "/v1/players/me", { token: key });
  const player = { id: me.id, name: me.name, key };
  keep(player);
  return player;
}

async function signUp(name) {
  const created = await api("POST", "/v1/players", { body: { name } });
  const player = { id: created.id, name: created.name, key: created.key };
  keep(player);
  return player;
}

// Show the signed-in player's wallet in the header (#player-balance): chips free to
// spend, off the tables (docs/ledger.md). Call it again after a seat or a leave.
export async function refreshBalance() {
  const player = currentPlayer();
  const shown = document.getElementById("player-balance");
  if (!player || !shown) return;
  try {
    const me = await api("GET", "/v1/players/me", { token: player.key });
    shown.textContent = " · " + tn("{n} chip in the wallet", "{n} chips in the wallet", me.balance);
  } catch {
    shown.textContent = "";
  }
}

// The sign-in panel's fixed words (both pages have it).
const SIGN_IN_WORDS = {
  "sign-in-title": () => t("Sign in to play"),
  "your-name": () => t("Your name"),
  "play-under-name": () => t("Play under this name"),
  "operator-note": () => t("Players here are created by the operator: paste the key you were given."),
  "your-key": () => t("Your player key"),
  "key-where": () => t("(from another device, or from the operator)"),
  "sign-in-with-key": () => t("Sign in with this key"),
  "keep-key-title": () => t("Keep your key"),
  "keep-key-why": () =>
    t("Your key is your wallet: this browser keeps it, and clearing the browser's data loses it, with your chips. Keep a copy somewhere safe."),
  "copy-key": () => t("Copy the key"),
  "download-key": () => t("Download it as a file"),
  "key-kept": () => t("I have kept it"),
};

// The #keep-key panel, when the page has one: the new player's key, to copy or download.
function mountKeepKey() {
  const panel = document.getElementById("keep-key");
  if (!panel) return () => {};
  const field = document.getElementById("new-key");
  const download = document.getElementById("download-key");
  const status = document.getElementById("key-copied");
  document.getElementById("copy-key").addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(field.value);
    } catch {
      // without the clipboard's permission: the key selected, for the reader to copy
      field.select();
      status.textContent = t("Select the key and copy it yourself.");
      return;
    }
    status.textContent = t("Copied.");
  });
  document.getElementById("key-kept").addEventListener("click", () => {
    panel.hidden = true;
    document.getElementById("tables").focus();
  });
  return (player) => {
    field.value = player.key;
    if (download.href.startsWith("blob:")) URL.revokeObjectURL(download.href);
    download.href = URL.createObjectURL(new Blob([`${player.key}\n`], { type: "text/plain" }));
    status.textContent = "";
    panel.hidden = false;
    panel.focus();
  };
}

function hideKeepKey() {
  const panel = document.getElementById("keep-key");
  if (panel) panel.hidden = true;
}

// Fill the header's #account and the #sign-in panel; `changed(player or null)` is called
// after a sign-in or a sign-out.
export function mountAccount(changed) {
  const header = document.getElementById("account");
  const panel = document.getElementById("sign-in");
  const problemBox = document.getElementById("problem");
  let mode = playersMode();
  const offerToKeep = mountKeepKey();

  function report(error) {
    problemBox.dataset.source = "account";
    showProblem(problemBox, error);
  }

  function draw() {
    const player = currentPlayer();
    if (player) {
      header.replaceChildren(
        el("span", { class: "who-am-i" }, [
          t("Signed in as {name}", { name: el("strong", { attrs: { id: "player-name" } }, [bdi(player.name)]) }),
          el("span", { class: "muted", attrs: { id: "player-balance" } }),
        ]),
        el("button", {
          class: "quiet", text: t("Sign out"), attrs: { type: "button", id: "sign-out" },
          on: { click: () => { forgetPlayer(); hideKeepKey(); draw(); changed(null); } },
        }),
      );
      panel.hidden = true;
      refreshBalance();
      const key = document.getElementById("my-key");
      if (key) key.value = player.key;
    } else {
      header.replaceChildren(el("span", { class: "muted", text: t("Not signed in") }));
      panel.hidden = false;
    }
    document.getElementById("sign-up").hidden = mode !== "open";
    document.getElementById("operator-note").hidden = mode !== "operator";
  }

  async function done(promise, button, creating) {
    button.disabled = true;
    try {
      const player = await promise;
      if (problemBox.dataset.source === "account") showProblem(problemBox, null);
      draw();
      changed(player);
      if (creating) offerToKeep(player);
    } catch (error) {
      if (creating && error instanceof ProblemError && (error.status === 401 || error.status === 403)) {
        // This gateway creates players only for its operator: a key is the way in.
        mode = "operator";
        draw();
        report(new ProblemError(error.status, { detail: t("Players here are created by the operator: paste the key you were given.") }));
      } else if (keyRefused(error)) {
        report(new ProblemError(error.status, { detail: t("This key does not sign anyone in. Check that it was pasted whole.") }));
      } else {
        report(error);
      }
    } finally {
      button.disabled = false;
    }
  }

  document.getElementById("sign-up").addEventListener("submit", (event) => {
    event.preventDefault();
    const form = event.target;
    const name = form.elements.namedItem("player_name").value.trim();
    if (!name) {
      report(new ProblemError(422, { detail: t("Type a name first.") }));
      return;
    }
    done(signUp(name), form.querySelector("button[type=submit]"), true);
  });
  document.getElementById("key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const form = event.target;
    const key = form.elements.namedItem("player_key").value.trim();
    if (!key) {
      report(new ProblemError(422, { detail: t("Paste your player key first.") }));
      return;
    }
    done(signInWithKey(key), form.querySelector("button[type=submit]"), false);
  });
  onLanguageChange(() => {
    translateStatic(SIGN_IN_WORDS);
    draw();
  });
  return { signedOut: () => { forgetPlayer(); draw(); } };
}
