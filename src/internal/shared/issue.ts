/**
 * One line out of a Schema parse error: the path of the first problem and
 * what was wrong there. Used wherever a decoded file or flag is reported to
 * a person (a Schema tree names every member of a union and spans lines).
 */
import { ParseResult } from "effect"

const pathText = (path: ReadonlyArray<PropertyKey>): string => {
  let out = ""
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`
    else out += out === "" ? String(key) : `.${String(key)}`
  }
  return out
}

/**
 * The first problem of a parse error, e.g. `"maxMetricCalls": expected a
 * positive integer, got -3` or `unknown field "maxMetricCall"`. Among issues
 * at different depths the deepest wins: for a union of a name and an
 * object, a bad field of the object says more than "expected a string".
 */
export const firstIssue = (error: ParseResult.ParseError): string => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
  if (issues.length === 0) return error.message.split("\n")[0] ?? "invalid value"
  // the first of the deepest
  const best = issues.reduce((deepest, issue) => (issue.path.length > deepest.path.length ? issue : deepest))
  const where = pathText(best.path)
  if (best._tag === "Unexpected") return `unknown field ${JSON.stringify(where)}`
  if (best._tag === "Missing") return `missing field ${JSON.stringify(where)}`
  const message = best.message.replace(/\s*\n\s*/g, " ")
  return where === "" ? message : `${JSON.stringify(where)}: ${message}`
}
