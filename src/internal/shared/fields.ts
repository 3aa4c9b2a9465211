/**
 * Reading fields of values whose type is not known: parsed JSON, thrown
 * errors, a user's module, a provider's error body. Narrowing with these
 * replaces casts such as `(e as { code?: unknown }).code`, which would also
 * accept a `null` or a string and throw on it.
 *
 * @internal
 */

/** An object (not `null`), whose fields can be read as unknown. */
export const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> => typeof u === "object" && u !== null

/** The field `key` of `u` when `u` is an object, else `undefined`. */
export const field = (u: unknown, key: string): unknown => (isRecord(u) ? u[key] : undefined)
