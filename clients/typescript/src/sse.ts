/**
 * A table's server-sent events, read from `fetch`'s body stream (Node has no
 * EventSource; a browser runs the same code). The gateway ends each stream after a
 * while and a connection may break at any time: `EventStream` then connects again with
 * `Last-Event-ID` set to the last event it yielded, after the `retry:` delay the server
 * asked for, so the caller sees every event once, in order. Consecutive failed
 * connections back off and give up after the retry policy's `attempts`.
 */

import { CardroomError } from "./errors.js";
import type { components } from "./schema.js";
import { type RetryPolicy, retryDelay, retryable, sleep } from "./transport.js";

export type Event = components["schemas"]["Event"];

/** One dispatched block of the stream. */
export interface ServerSentEvent {
  id: string | null;
  event: string;
  data: string;
  retry: number | null;
}

/** Splits text chunks into SSE blocks; a block with no data (a comment) yields null. */
export class SseParser {
  private buffer = "";
  private data: string[] = [];
  private id: string | null = null;
  private event: string | null = null;
  private retry: number | null = null;
  private seen = false;

  /** The blocks completed by `chunk`. */
  push(chunk: string): (ServerSentEvent | null)[] {
    this.buffer += chunk;
    const out: (ServerSentEvent | null)[] = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffer);
      // a lone \r at the end may be the first half of \r\n: wait for more
      if (match === null || (match[0] === "\r" && match.index === this.buffer.length - 1)) {
        return out;
      }
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      const block = this.line(line);
      if (block !== undefined) {
        out.push(block);
      }
    }
  }

  private line(line: string): ServerSentEvent | null | undefined {
    if (line === "") {
      let block: ServerSentEvent | null | undefined;
      if (this.data.length > 0) {
        block = {
          id: this.id,
          event: this.event ?? "message",
          data: this.data.join("\n"),
          retry: this.retry,
        };
      } else if (this.seen) {
        block = this.retry === null ? null : { id: null, event: "message", data: "", retry: this.retry };
      }
      this.data = [];
      this.id = null;
      this.event = null;
      this.retry = null;
      this.seen = false;
      return block;
    }
    this.seen = true;
    if (line.startsWith(":")) {
      return undefined;
    }
    const colon = line.indexOf(":");
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) {
      value = value.slice(1);
    }
    if (name === "data") {
      this.data.push(value);
    } else if (name === "id" && !value.includes("\0")) {
      this.id = value;
    } else if (name === "event") {
      this.event = value;
    } else if (name === "retry" && /^\d+$/.test(value)) {
      this.retry = Number(value);
    }
    return undefined;
  }
}

export interface StreamOptions {
  /** The id of the last event already seen; the stream starts after it. */
  after?: number;
  /** Ends the stream (and its connection) when aborted. */
  signal?: AbortSignal;
  /** Seconds between a stream the server ended and the next; default: the server's `retry:`. */
  reconnectDelay?: number;
  /** Each connection opens with the ticket this returns (`?ticket=`) instead of a bearer. */
  tickets?: () => Promise<string>;
}

/** Iterate a table's events as they happen (`for await`); reconnects with Last-Event-ID. */
export class EventStream implements AsyncIterable<Event> {
  /** The id of the last event yielded (pass it as `after` to resume later). */
  lastEventId: number;
  /** Connections made after the first. */
  reconnects = 0;
  private readonly controller = new AbortController();
  private serverDelay = 1;

  constructor(
    private readonly url: string,
    private readonly token: string | null,
    private readonly retry: RetryPolicy,
    private readonly options: StreamOptions = {},
    private readonly fetcher: typeof fetch = globalThis.fetch,
  ) {
    this.lastEventId = options.after ?? 0;
    options.signal?.addEventListener("abort", () => this.close(), { once: true });
    if (options.signal?.aborted) {
      this.close();
    }
  }

  /** Drop the connection; iteration ends. */
  close(): void {
    this.controller.abort();
  }

  get closed(): boolean {
    return this.controller.signal.aborted;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Event, void, undefined> {
    let failures = 0;
    let first = true;
    const signal = this.controller.signal;
    try {
      while (!this.closed) {
        if (!first) {
          this.reconnects += 1;
        }
        first = false;
        const headers: Record<string, string> = {
          Accept: "text/event-stream",
          "Cache-Control": "no-cache",
          "Last-Event-ID": String(this.lastEventId),
        };
        let url = this.url;
        if (this.options.tickets !== undefined) {
          url += `?ticket=${encodeURIComponent(await this.options.tickets())}`;
        } else if (this.token !== null) {
          headers.Authorization = `Bearer ${this.token}`;
        }
        let failure: CardroomError | null = null;
        try {
          const response = await this.fetcher(url, { headers, signal });
          if (response.status !== 200 || response.body === null) {
            const text = await response.text();
            let body: unknown = text;
            try {
              body = JSON.parse(text);
            } catch {
              // not JSON: keep the text
            }
            failure = CardroomError.fromResponse(response, body);
            if (!retryable(failure)) {
              throw failure;
            }
          } else {
            const parser = new SseParser();
            const decoder = new TextDecoder();
            const reader = response.body.getReader();
            try {
              for (;;) {
                const { done, value } = await reader.read();
                const blocks = done ? parser.push(decoder.decode()) : parser.push(decoder.decode(value, { stream: true }));
                for (const block of blocks) {
                  failures = 0;
                  if (block !== null && block.retry !== null) {
                    this.serverDelay = block.retry / 1000;
                  }
                  if (block !== null && block.data !== "") {
                    const event = JSON.parse(block.data) as Event;
                    this.lastEventId = event.id;
                    yield event;
                    if (this.closed) {
                      return;
                    }
                  }
                }
                if (done) {
                  break;
                }
              }
            } finally {
              reader.cancel().catch(() => undefined);
            }
          }
        } catch (error) {
          if (this.closed) {
            return;
          }
          if (error instanceof CardroomError) {
            throw error;
          }
          failure = CardroomError.connectionFailed(error, "GET", this.url);
        }
        let delay: number;
        if (failure === null) {
          // the server ended the stream, as it does after a while: come back after its delay
          delay = this.options.reconnectDelay ?? this.serverDelay;
        } else {
          failures += 1;
          if (failures >= this.retry.attempts) {
            throw failure;
          }
          delay = retryDelay(this.retry, failures, failure.retryAfter);
        }
        await sleep(delay, signal);
      }
    } finally {
      this.close();
    }
  }
}
