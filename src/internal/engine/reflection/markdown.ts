/**
 * Markdown for reflection prompts: fenced texts whose fence no line inside
 * can close, and values rendered as headings, bullets and JSON blocks.
 *
 * @internal
 */
import { at } from "../../shared/invariant.js"

/**
 * A fence of `char` longer than any run of it at the start of a line of
 * `text`, so the text cannot close it early.
 */
export const fenceFor = (text: string, char: "`" | "~" = "`"): string => {
  let longest = 0
  const run = char === "`" ? /^[ \t]*(`+)/gm : /^[ \t]*(~+)/gm
  for (const m of text.matchAll(run)) longest = Math.max(longest, at(m, 1).length)
  return char.repeat(Math.max(3, longest + 1))
}

export const fenced = (text: string): string => {
  const fence = fenceFor(text)
  return `${fence}\n${text}\n${fence}`
}

const isScalar = (value: unknown): boolean => value === null || typeof value !== "object"

const scalarText = (value: unknown): string => {
  if (value === undefined) return "(none)"
  if (typeof value === "string") return value.includes("\n") ? fenced(value) : value === "" ? "(empty)" : value
  if (typeof value === "bigint") return `${value}`
  if (typeof value === "function" || typeof value === "symbol") return String(value)
  return JSON.stringify(value)
}

const jsonBlock = (value: unknown): string => {
  let text: string
  try {
    text = JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? `${v}` : v), 2) ?? String(value)
  } catch {
    // cyclic data: a flat description beats failing the whole proposal
    text = String(value)
  }
  const fence = fenceFor(text)
  return `${fence}json\n${text}\n${fence}`
}

/**
 * Renders a value under a heading of `level`. Objects become sub-headings
 * per key, lists of scalars become bullets, lists of structures become
 * numbered sub-headings; below heading level 6 the rest is shown as JSON.
 */
export const renderValue = (value: unknown, level: number): string => {
  if (isScalar(value)) return scalarText(value)
  if (level > 6) return jsonBlock(value)
  const heading = "#".repeat(level)
  if (Array.isArray(value)) {
    if (value.length === 0) return "(none)"
    if (value.every((v) => isScalar(v) && !(typeof v === "string" && v.includes("\n")))) {
      return value.map((v) => `- ${scalarText(v)}`).join("\n")
    }
    return value.map((v, i) => `${heading} Item ${i + 1}\n\n${renderValue(v, level + 1)}`).join("\n\n")
  }
  const entries: ReadonlyArray<readonly [string, unknown]> = typeof value === "object" && value !== null ? Object.entries(value) : []
  if (entries.length === 0) return "(empty)"
  return entries.map(([k, v]) => `${heading} ${k}\n\n${renderValue(v, level + 1)}`).join("\n\n")
}
