/** The gateway's problem+json (RFC 9457) as an exception. */

import type { components } from "./schema.js";

export type Problem = components["schemas"]["Problem"];

/**
 * A failed call: `status` is null when no answer came (`code` is then
 * `connection_failed`); otherwise the fields of the problem+json the gateway sent.
 */
export class CardroomError extends Error {
  override name = "CardroomError";

  constructor(
    readonly status: number | null,
    readonly code: string,
    readonly title: string,
    readonly detail: string,
    readonly field: string | null = null,
    readonly instance: string | null = null,
    readonly retryAfter: number | null = null,
    readonly problem: Record<string, unknown> | null = null,
  ) {
    super(`${status ?? "no answer"} ${code}: ${detail}`);
  }

  /** The error for an answer, from its problem+json body when it has one. */
  static fromResponse(response: Response, body: unknown): CardroomError {
    const retryAfter = parseRetryAfter(response.headers.get("retry-after"));
    if (body !== null && typeof body === "object" && typeof (body as Problem).code === "string") {
      const problem = body as Problem;
      return new CardroomError(
        response.status,
        problem.code,
        String(problem.title ?? ""),
        String(problem.detail ?? ""),
        typeof problem.field === "string" ? problem.field : null,
        typeof problem.instance === "string" ? problem.instance : null,
        retryAfter,
        problem,
      );
    }
    const text = typeof body === "string" ? body.slice(0, 200).trim() : "";
    return new CardroomError(
      response.status,
      `http_${response.status}`,
      response.statusText,
      text || `HTTP ${response.status} without a problem body.`,
      null,
      null,
      retryAfter,
    );
  }

  /** The error for a request that got no answer. */
  static connectionFailed(cause: unknown, method: string, url: string): CardroomError {
    const error = new CardroomError(
      null,
      "connection_failed",
      "No answer",
      `No answer from the gateway to ${method} ${url} (${String(cause)}).`,
    );
    error.cause = cause;
    return error;
  }
}

/** Retry-After as seconds: a number of seconds or an HTTP date; null if absent or bad. */
export function parseRetryAfter(value: string | null): number | null {
  if (value === null || value.trim() === "") {
    return null;
  }
  const seconds = Number(value.trim());
  if (Number.isFinite(seconds)) {
    return Math.max(0, seconds);
  }
  const when = Date.parse(value);
  return Number.isNaN(when) ? null : Math.max(0, (when - Date.now()) / 1000);
}
