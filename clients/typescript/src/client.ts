/**
 * `Client`: the cardroom HTTP API as typed methods over openapi-fetch; `Seat`: one seat's
 * moves. A client sends one credential as `Authorization: Bearer`: a player's key
 * (`crk_...`), an identity provider's JWT, or a seat token. Creating tables and taking
 * seats need a player's; a seat acts with its own token.
 */

import createClient, { type Client as FetchClient } from "openapi-fetch";

import { CardroomError } from "./errors.js";
import type { components, paths } from "./schema.js";
import { type Event, EventStream, type StreamOptions } from "./sse.js";
import { DEFAULT_RETRY, type RetryPolicy, retryingFetch } from "./transport.js";

type Schemas = components["schemas"];
export type Table = Schemas["Table"];
export type TableSummary = Schemas["TableSummary"];
export type TablePage = Schemas["TablePage"];
export type TableCreated = Schemas["TableCreated"];
export type CreateTable = Schemas["CreateTable"];
export type Action = Schemas["Action"];
export type ActionResult = Schemas["ActionResult"];
export type EventPage = Schemas["EventPage"];
export type HandHistory = Schemas["HandHistory"];
export type NewPlayer = Schemas["PlayerCreated"];
export type Player = Schemas["Player"];
export type NewKey = Schemas["KeyCreated"];
export type HeldSeat = Schemas["HeldSeat"];
export type SeatGranted = Schemas["SeatGranted"];
export type QuickSeated = Schemas["QuickSeated"];
/** What a lobby page is filtered on (`GET /v1/tables`'s query). */
export type LobbyFilters = Omit<
  NonNullable<paths["/v1/tables"]["get"]["parameters"]["query"]>,
  "limit" | "cursor"
>;
export type SeatLeft = Schemas["SeatLeft"];
export type TableClosing = Schemas["TableClosing"];
export type PlayerLimits = Schemas["PlayerLimits"];
export type SetLimit = Schemas["SetLimit"];
export type LimitSlot = Schemas["LimitSlot"];
export type Exclude = Schemas["Exclude"];
export type ExclusionState = Schemas["ExclusionState"];
export type ExclusionTaken = Schemas["ExclusionTaken"];
export type DealPage = Schemas["DealPage"];
export type PlayerOverview = Schemas["PlayerOverview"];
export type Session = Schemas["Session"];
export type SessionSettings = Schemas["SessionSettings"];
export type SessionSetting = Schemas["SessionSetting"];
export type StreamTicket = Schemas["StreamTicket"];
export type SeatBot = Schemas["SeatBot"];
export type BotSeated = Schemas["BotSeated"];

export interface ClientOptions {
  /** A player's key, a JWT or a seat token; none: anonymous. */
  credential?: string | null;
  /** What is retried, and how; see `RetryPolicy`. */
  retry?: Partial<RetryPolicy>;
  /** The fetch to send with (default: the global one). */
  fetch?: typeof fetch;
}

/** Per-call options of a write. */
export interface WriteOptions {
  /** The bearer for this call instead of the client's credential (a seat token). */
  token?: string | null;
  /** The Idempotency-Key; default: a fresh one for this call, kept across its retries. */
  idempotencyKey?: string;
  /** An ETag the table must still have (`If-Match`). */
  ifMatch?: string;
}

/** A move's answer with what the headers said. */
export interface MoveResult extends ActionResult {
  etag: string | null;
  /** True when the gateway replayed the first answer to this Idempotency-Key. */
  replayed: boolean;
}

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

function unwrap<T>(answer: Answer<T>): T {
  if (answer.error !== undefined || answer.data === undefined) {
    throw CardroomError.fromResponse(answer.response, answer.error ?? null);
  }
  return answer.data;
}

/** A cardroom gateway at `baseUrl`. Failures throw `CardroomError`. */
export class Client {
  readonly baseUrl: string;
  credential: string | null;
  readonly retry: RetryPolicy;
  /** The generated openapi-fetch client, for calls this layer does not wrap. */
  readonly api: FetchClient<paths>;
  private readonly fetcher: typeof fetch;

  constructor(baseUrl = "http://127.0.0.1:8000", options: ClientOptions = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.credential = options.credential ?? null;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.fetcher = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.api = createClient<paths>({
      baseUrl: this.baseUrl,
      fetch: retryingFetch(() => this.retry, this.fetcher),
    });
  }

  /** A client of the same gateway that sends `credential`. */
  withCredential(credential: string | null): Client {
    return new Client(this.baseUrl, { credential, retry: this.retry, fetch: this.fetcher });
  }

  private headers(options: WriteOptions = {}): Record<string, string> {
    const headers: Record<string, string> = {};
    const bearer = options.token === undefined ? this.credential : options.token;
    if (bearer !== null) {
      headers.Authorization = `Bearer ${bearer}`;
    }
    if (options.idempotencyKey !== undefined) {
      headers["Idempotency-Key"] = options.idempotencyKey;
    }
    if (options.ifMatch !== undefined) {
      headers["If-Match"] = options.ifMatch;
    }
    return headers;
  }

  // players

  /** A new player and their first key, shown only in this answer. */
  async createPlayer(name: string): Promise<NewPlayer> {
    return unwrap(await this.api.POST("/v1/players", { body: { name }, headers: this.headers() }));
  }

  /** The player the credential belongs to. */
  async me(): Promise<Player> {
    return unwrap(await this.api.GET("/v1/players/me", { headers: this.headers() }));
  }

  /** Another key for the player, shown only in this answer. */
  async addKey(): Promise<NewKey> {
    return unwrap(await this.api.POST("/v1/players/me/keys", { headers: this.headers() }));
  }

  /** Revoke one of the player's keys. */
  async revokeKey(keyId: string): Promise<void> {
    const answer = await this.api.DELETE("/v1/players/me/keys/{key_id}", {
      params: { path: { key_id: keyId } },
      headers: this.headers(),
    });
    if (answer.error !== undefined) {
      throw CardroomError.fromResponse(answer.response, answer.error);
    }
  }

  /** Every seat the player holds. */
  async mySeats(): Promise<HeldSeat[]> {
    return unwrap(await this.api.GET("/v1/players/me/seats", { headers: this.headers() })).seats;
  }

  // tables

  /**
   * One page of the lobby: the tables to join first (the fullest with a free seat, then
   * the full ones), only those that pass `filters`; `mine: "true"` lists the player's own.
   */
  async lobby(limit = 20, cursor?: string, filters: LobbyFilters = {}): Promise<TablePage> {
    const query = cursor === undefined ? { ...filters, limit } : { ...filters, limit, cursor };
    return unwrap(await this.api.GET("/v1/tables", { params: { query }, headers: this.headers() }));
  }

  /**
   * A seat at a table like `table` (an option left out matches any) with a free seat, or
   * at a table made for it; `seat.granted.created` says which. Two players never both get
   * a table's last seat.
   */
  async quickSeat(
    table: CreateTable,
    buyIn: number,
    name?: string,
    write: WriteOptions = {},
  ): Promise<Seat & { granted: QuickSeated }> {
    const body = name === undefined ? { table, buy_in: buyIn } : { table, buy_in: buyIn, name };
    const granted = unwrap(
      await this.api.POST("/v1/tables/quick-seat", { body, headers: this.headers(write) }),
    );
    return new Seat(this, granted.table.id, granted.seat, granted.token, granted) as Seat & {
      granted: QuickSeated;
    };
  }

  /** A new table and its first event; the credential must be a player's. */
  async createTable(options: CreateTable, write: WriteOptions = {}): Promise<TableCreated> {
    return unwrap(await this.api.POST("/v1/tables", { body: options, headers: this.headers(write) }));
  }

  /** A table as the bearer (a seat's token, or the credential) sees it. */
  async table(tableId: string, options: { token?: string | null } = {}): Promise<Table> {
    return unwrap(
      await this.api.GET("/v1/tables/{table_id}", {
        params: { path: { table_id: tableId } },
        headers: this.headers(options),
      }),
    );
  }

  /** Take a seat with `buyIn` chips; the answer holds the seat's token. */
  async takeSeat(tableId: string, buyIn: number, name?: string, write: WriteOptions = {}): Promise<Seat> {
    const body = name === undefined ? { buy_in: buyIn } : { buy_in: buyIn, name };
    const granted = unwrap(
      await this.api.POST("/v1/tables/{table_id}/seats", {
        params: { path: { table_id: tableId } },
        body,
        headers: this.headers(write),
      }),
    );
    return new Seat(this, tableId, granted.seat, granted.token, granted);
  }

  /** Make a move; the answer is the table after it and the events it produced. */
  async act(tableId: string, action: Action, write: WriteOptions = {}): Promise<MoveResult> {
    const answer = await this.api.POST("/v1/tables/{table_id}/actions", {
      params: { path: { table_id: tableId } },
      body: action,
      headers: this.headers(write),
    });
    const result = unwrap(answer);
    return {
      ...result,
      etag: answer.response.headers.get("etag"),
      replayed: answer.response.headers.get("idempotent-replayed") === "true",
    };
  }

  /** Leave a seat (at once between deals, else after the deal). */
  async leave(tableId: string, seat: number, write: WriteOptions = {}): Promise<SeatLeft> {
    return unwrap(
      await this.api.DELETE("/v1/tables/{table_id}/seats/{seat}", {
        params: { path: { table_id: tableId, seat } },
        headers: this.headers(write),
      }),
    );
  }

  /**
   * Seat a computer player playing `strategy` ("random", "easy" or "strong") with chips from
   * the house; the credential must be the table's creator's or an operator key. The
   * gateway's bots runner plays the seat (docs/bots.md).
   */
  async seatBot(tableId: string, bot: SeatBot, write: WriteOptions = {}): Promise<BotSeated> {
    return unwrap(
      await this.api.POST("/v1/tables/{table_id}/bots", {
        params: { path: { table_id: tableId } },
        body: bot,
        headers: this.headers(write),
      }),
    );
  }

  /** Make the computer player in `seat` leave (at once between deals, else after the deal). */
  async removeBot(tableId: string, seat: number): Promise<SeatLeft> {
    return unwrap(
      await this.api.DELETE("/v1/tables/{table_id}/bots/{seat}", {
        params: { path: { table_id: tableId, seat } },
        headers: this.headers(),
      }),
    );
  }

  /**
   * Close a table: its creator before its first deal, an operator at any time. Every
   * seat is cashed out (a seat in the current deal when it is settled). An operator
   * removes a single seat with `leave` and an operator key.
   */
  async closeTable(tableId: string, write: WriteOptions = {}): Promise<TableClosing> {
    return unwrap(
      await this.api.DELETE("/v1/tables/{table_id}", {
        params: { path: { table_id: tableId } },
        headers: this.headers(write),
      }),
    );
  }

  /** The player's deposit, buy-in and loss limits, and what is left of each. */
  async myLimits(): Promise<PlayerLimits> {
    return unwrap(await this.api.GET("/v1/players/me/limits", { headers: this.headers({}) }));
  }

  /**
   * Set one of the player's limits (`amount` null removes it): a lower one applies at
   * once, a higher one or a removal once cooled and confirmed (`confirmMyLimit`).
   */
  async setMyLimit(limit: SetLimit): Promise<PlayerLimits> {
    return unwrap(
      await this.api.POST("/v1/players/me/limits", { body: limit, headers: this.headers({}) }),
    );
  }

  /** Confirm a raised or removed limit once its cooling period is over. */
  async confirmMyLimit(slot: LimitSlot): Promise<PlayerLimits> {
    return unwrap(
      await this.api.POST("/v1/players/me/limits/confirmations", {
        body: slot,
        headers: this.headers({}),
      }),
    );
  }

  /** Set the operator's own limit for a player, at once (an operator key). */
  async setPlayerLimit(playerId: string, limit: SetLimit): Promise<PlayerLimits> {
    return unwrap(
      await this.api.POST("/v1/operator/players/{player_id}/limits", {
        params: { path: { player_id: playerId } },
        body: limit,
        headers: this.headers({}),
      }),
    );
  }

  /** The player's last time-out or self-exclusion, and whether it still runs. */
  async myExclusion(): Promise<ExclusionState> {
    return unwrap(await this.api.GET("/v1/players/me/exclusions", { headers: this.headers({}) }));
  }

  /**
   * Take a time-out (`{kind: "time_out", days}`) or exclude oneself (`{kind:
   * "self_exclusion", months}` or `permanent: true`): every seat is left after its deal,
   * and no seat, buy-in or deposit is taken until it ends. It cannot be shortened.
   */
  async exclude(exclusion: Exclude): Promise<ExclusionTaken> {
    return unwrap(
      await this.api.POST("/v1/players/me/exclusions", {
        body: exclusion,
        headers: this.headers({}),
      }),
    );
  }

  /** The deals the player played, newest first, at every table. */
  async myDeals(options: { limit?: number; cursor?: string } = {}): Promise<DealPage> {
    return unwrap(
      await this.api.GET("/v1/players/me/deals", {
        params: { query: { limit: options.limit ?? 20, cursor: options.cursor } },
        headers: this.headers({}),
      }),
    );
  }

  /** One of the player's deals as they saw it (kept for their newest deals). */
  async myDeal(tableId: string, handNumber: number): Promise<HandHistory> {
    return unwrap(
      await this.api.GET("/v1/players/me/deals/{table_id}/{hand_number}", {
        params: { path: { table_id: tableId, hand_number: handNumber } },
        headers: this.headers({}),
      }),
    );
  }

  /** The player's last `last` deals as PHH-style TOML text (docs/hand-histories.md). */
  async myDealsText(last = 10): Promise<string> {
    const answer = await this.api.GET("/v1/players/me/deals/phh", {
      params: { query: { last } },
      headers: this.headers({}),
      parseAs: "text",
    });
    if (answer.error === undefined && answer.response.ok) {
      return answer.data ?? ""; // no deals: an empty text
    }
    return unwrap(answer);
  }

  /**
   * A player for an operator (an operator key): name, wallet, limits, exclusion and
   * activity per UTC day over the last `days` days, newest first.
   */
  async playerOverview(playerId: string, days = 30): Promise<PlayerOverview> {
    return unwrap(
      await this.api.GET("/v1/operator/players/{player_id}", {
        params: { path: { player_id: playerId }, query: { days } },
        headers: this.headers({}),
      }),
    );
  }

  /** The player's session settings and the session running. */
  async mySession(): Promise<Session> {
    return unwrap(await this.api.GET("/v1/players/me/session", { headers: this.headers({}) }));
  }

  /**
   * Set the session's time limit and reality-check interval (minutes; null: none; a
   * member left out stays as it is): a stricter setting applies at once, a looser one
   * waits in `pending` until cooled and confirmed (`confirmMySession`).
   */
  async setMySession(settings: SessionSettings): Promise<Session> {
    return unwrap(
      await this.api.POST("/v1/players/me/session", { body: settings, headers: this.headers({}) }),
    );
  }

  /** Confirm a looser session setting once its cooling period is over. */
  async confirmMySession(setting: SessionSetting): Promise<Session> {
    return unwrap(
      await this.api.POST("/v1/players/me/session/confirmations", {
        body: setting,
        headers: this.headers({}),
      }),
    );
  }

  /** The events after `after`, waiting up to `wait` seconds for one (long poll). */
  async events(
    tableId: string,
    options: { after?: number; wait?: number; token?: string | null } = {},
  ): Promise<EventPage> {
    return unwrap(
      await this.api.GET("/v1/tables/{table_id}/events", {
        params: {
          path: { table_id: tableId },
          query: { after: options.after ?? 0, wait: options.wait ?? 0 },
        },
        headers: this.headers(options),
      }),
    );
  }

  /** A ticket that opens one event stream (`?ticket=`), for clients that cannot send headers. */
  async streamTicket(tableId: string, options: { token?: string | null } = {}): Promise<StreamTicket> {
    return unwrap(
      await this.api.POST("/v1/tables/{table_id}/stream-tickets", {
        params: { path: { table_id: tableId } },
        headers: this.headers(options),
      }),
    );
  }

  /** Follow a table's events as they happen (`for await`), reconnecting by itself. */
  stream(tableId: string, options: StreamOptions & { token?: string | null } = {}): EventStream {
    const bearer = options.token === undefined ? this.credential : options.token;
    const url = `${this.baseUrl}/v1/tables/${encodeURIComponent(tableId)}/events/stream`;
    return new EventStream(url, bearer, this.retry, options, this.fetcher);
  }

  /** One hand's history (with the fairness proof), as the bearer may see it. */
  async hand(tableId: string, handNumber: number, options: { token?: string | null } = {}): Promise<HandHistory> {
    return unwrap(
      await this.api.GET("/v1/tables/{table_id}/hands/{hand_number}", {
        params: { path: { table_id: tableId, hand_number: handNumber } },
        headers: this.headers(options),
      }),
    );
  }
}

/** A seat at a table, acting with its own token. */
export class Seat {
  constructor(
    readonly client: Client,
    readonly tableId: string,
    readonly number: number,
    readonly token: string,
    readonly granted: SeatGranted | null = null,
  ) {}

  private write(options: Omit<WriteOptions, "token">): WriteOptions {
    return { ...options, token: this.token };
  }

  /** The table as this seat sees it (its own cards included). */
  table(): Promise<Table> {
    return this.client.table(this.tableId, { token: this.token });
  }

  act(action: Action, options: Omit<WriteOptions, "token"> = {}): Promise<MoveResult> {
    return this.client.act(this.tableId, action, this.write(options));
  }

  start(options: Omit<WriteOptions, "token"> = {}): Promise<MoveResult> {
    return this.act({ action: "start" }, options);
  }

  declare(choice: "in" | "out", options: Omit<WriteOptions, "token"> = {}): Promise<MoveResult> {
    return this.act({ action: "declare", choice }, options);
  }

  rebuy(amount: number, options: Omit<WriteOptions, "token"> = {}): Promise<MoveResult> {
    return this.act({ action: "rebuy", amount }, options);
  }

  draw(source: "stock" | "discard" = "stock", options: Omit<WriteOptions, "token"> = {}): Promise<MoveResult> {
    return this.act({ action: "draw", source }, options);
  }

  discard(card: string, options: Omit<WriteOptions, "token"> = {}): Promise<MoveResult> {
    return this.act({ action: "discard", card }, options);
  }

  call(cards: string[], discard: string | null, options: Omit<WriteOptions, "token"> = {}): Promise<MoveResult> {
    return this.act({ action: "call", cards, discard }, options);
  }

  leave(options: Omit<WriteOptions, "token"> = {}): Promise<SeatLeft> {
    return this.client.leave(this.tableId, this.number, this.write(options));
  }

  events(options: { after?: number; wait?: number } = {}): Promise<EventPage> {
    return this.client.events(this.tableId, { ...options, token: this.token });
  }

  stream(options: StreamOptions = {}): EventStream {
    return this.client.stream(this.tableId, { ...options, token: this.token });
  }

  hand(handNumber: number): Promise<HandHistory> {
    return this.client.hand(this.tableId, handNumber, { token: this.token });
  }
}

export type { Event };
