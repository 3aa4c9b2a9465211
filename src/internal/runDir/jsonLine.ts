/**
 * One line of an append-only JSON-lines log, as the readers of such logs
 * need it: the parsed value, or `undefined` for an empty line or one that
 * does not parse (a line cut by a crash mid-append, or still being written).
 * JSON itself has no `undefined`, so the two cannot be confused.
 *
 * @internal
 */
export const parseJsonLine = (line: string): unknown => {
  if (line.length === 0) return undefined
  try {
    return JSON.parse(line) as unknown
  } catch {
    return undefined
  }
}
