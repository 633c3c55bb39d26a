/**
 * Retries made safe by `Idempotency-Key`: every POST and DELETE gets one fresh key per
 * logical call (`crypto.randomUUID()`), sent again unchanged with each retry of that
 * call, so the gateway applies the write at most once and replays its first answer.
 * A call is retried after a network error, on 429 (not `quota_exceeded`), 502, 503 and
 * 504, and on the 409 codes that mean nothing happened yet (`idempotency_in_progress`,
 * `conflict`); it waits the gateway's `Retry-After` (capped at `maxRetryAfter`) or else
 * an exponential backoff with full jitter, within `attempts` and `deadline`.
 */

import { CardroomError, parseRetryAfter } from "./errors.js";

export interface RetryPolicy {
  /** Tries in all; 1 turns retrying off. */
  attempts: number;
  /** Seconds for all the tries of one call. */
  deadline: number;
  /** Seconds: the first backoff's ceiling, and the jitter added to a Retry-After. */
  backoff: number;
  /** Seconds: the longest backoff. */
  maxBackoff: number;
  /** Seconds: the longest Retry-After honoured. */
  maxRetryAfter: number;
  /** Called before each retry with its number, the failure and the pause (seconds). */
  onRetry?: (retry: number, error: CardroomError, pause: number) => void;
}

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 5,
  deadline: 30,
  backoff: 0.1,
  maxBackoff: 5,
  maxRetryAfter: 10,
};

export const NO_RETRY: RetryPolicy = { ...DEFAULT_RETRY, attempts: 1 };

const RETRYABLE_STATUSES = new Set([429, 502, 503, 504]);
const RETRYABLE_CODES = new Set(["idempotency_in_progress", "conflict"]);
const FINAL_CODES = new Set(["quota_exceeded"]);
const WRITES = new Set(["POST", "DELETE", "PUT", "PATCH"]);

/** True if a failure of this kind may be retried safely. */
export function retryable(error: CardroomError): boolean {
  if (error.status === null) {
    return true;
  }
  if (RETRYABLE_STATUSES.has(error.status)) {
    return !FINAL_CODES.has(error.code);
  }
  return error.status === 409 && RETRYABLE_CODES.has(error.code);
}

/** Seconds to wait before retry number `retry` (1 for the first). */
export function retryDelay(policy: RetryPolicy, retry: number, retryAfter: number | null): number {
  if (retryAfter !== null) {
    return Math.min(retryAfter, policy.maxRetryAfter) + Math.random() * policy.backoff;
  }
  return Math.random() * Math.min(policy.maxBackoff, policy.backoff * 2 ** (retry - 1));
}

/** A fresh random Idempotency-Key. */
export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

export function sleep(seconds: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const timer = setTimeout(done, seconds * 1000);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

async function failureOf(response: Response): Promise<CardroomError> {
  let body: unknown = null;
  const text = await response.clone().text();
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return CardroomError.fromResponse(response, body);
}

/**
 * A `fetch` that retries one logical call by `policy`; writes get an Idempotency-Key
 * (the caller's, or a fresh one) kept across the retries. Answers the last response
 * (error statuses included, for the caller to read); throws a `CardroomError`
 * (`connection_failed`) when the last try got no answer.
 */
export function retryingFetch(
  policy: () => RetryPolicy,
  base: typeof fetch = globalThis.fetch,
): (request: Request) => Promise<Response> {
  return async (request: Request): Promise<Response> => {
    const rules = policy();
    const headers = new Headers(request.headers);
    if (WRITES.has(request.method) && !headers.has("Idempotency-Key")) {
      headers.set("Idempotency-Key", newIdempotencyKey());
    }
    const body = request.body === null ? null : await request.arrayBuffer();
    const ends = Date.now() + rules.deadline * 1000;
    for (let attempt = 1; ; attempt += 1) {
      let error: CardroomError;
      let response: Response | null = null;
      try {
        response = await base(request.url, {
          method: request.method,
          headers,
          body,
          signal: request.signal,
          redirect: request.redirect,
        });
      } catch (cause) {
        if (request.signal.aborted) {
          throw cause;
        }
        error = CardroomError.connectionFailed(cause, request.method, request.url);
      }
      if (response !== null) {
        if (response.ok || response.status === 304) {
          return response;
        }
        error = await failureOf(response);
      }
      const pause = retryDelay(rules, attempt, error!.retryAfter);
      const last =
        attempt >= rules.attempts || !retryable(error!) || Date.now() + pause * 1000 > ends;
      if (last) {
        if (response === null) {
          throw error!;
        }
        return response;
      }
      rules.onRetry?.(attempt, error!, pause);
      await sleep(pause, request.signal);
    }
  };
}
