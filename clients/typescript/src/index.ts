export * from "./client.js";
export * from "./errors.js";
export * from "./sse.js";
export * from "./transport.js";
export type { components, operations, paths } from "./schema.js";
