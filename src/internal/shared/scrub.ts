/**
 * The scrub behind `LanguageModel.scrubber` and `Secrets`: replaces secrets
 * in a text, in the forms a server may echo them, and fragments of long
 * secrets (a key split across two messages), with `[redacted]`.
 *
 * @internal
 */

/** Shorter values are placeholders ("unused", "x"); replacing them would mangle every text. */
export const minSecretLength = 4

/** Secrets at least this long also have their fragments scrubbed. */
export const minFragmentedLength = 16

/** The shortest fragment of a long secret that is scrubbed. */
export const fragmentLength = 8

export const REDACTED = "[redacted]"

/**
 * The forms a server may echo a value in: as is, JSON-escaped (once, with
 * `/` escaped too, and twice, for JSON inside a JSON string) and
 * URL-encoded.
 */
export const formsOf = (value: string): ReadonlyArray<string> => {
  const json = JSON.stringify(value).slice(1, -1)
  const forms = new Set([
    value,
    json,
    json.replace(/\//g, "\\/"),
    JSON.stringify(json).slice(1, -1),
    encodeURIComponent(value),
    encodeURIComponent(value).replace(/%20/g, "+")
  ])
  return Array.from(forms)
}

/**
 * Whether a fragment looks like a piece of a key rather than a word: it
 * mixes at least two of lowercase, uppercase, digits and other characters.
 * A key that happens to contain "unusable" or "anthropic" must not redact
 * those words everywhere.
 */
const isKeyLike = (gram: string): boolean => [/[a-z]/, /[A-Z]/, /[0-9]/, /[^A-Za-z0-9]/].filter((r) => r.test(gram)).length >= 2

// a polynomial hash of `fragmentLength` characters in 32-bit integer
// arithmetic (modulo 2^32, a ring, so a character rolls out exactly)
const B = 0x01000193
let top = 1
for (let i = 1; i < fragmentLength; i++) top = Math.imul(top, B)
const hashOf = (text: string, at: number): number => {
  let h = 0
  for (let j = 0; j < fragmentLength; j++) h = (Math.imul(h, B) + text.charCodeAt(at + j)) | 0
  return h
}
const roll = (h: number, out: number, into: number): number => (Math.imul((h - Math.imul(out, top)) | 0, B) + into) | 0

/** A compiled scrub over a set of secret values. */
export interface Compiled {
  readonly scrub: (text: string) => string
  readonly size: number
}

/**
 * The scrub of `values`: every form of each value (see `formsOf`) is
 * replaced whole, longest first; then every run of text made of
 * `fragmentLength`-character pieces of a long value (16+ characters) that
 * look like a key's (see `isKeyLike`) is replaced too, so a key cut in two, half in one message and half in the
 * next, leaves neither half. A replacement that could form a secret again
 * with its neighbours is caught by a last check, which hides the whole text.
 */
export const compile = (values: Iterable<string>): Compiled => {
  const forms = new Set<string>()
  const grams = new Set<string>()
  for (const value of values) {
    if (typeof value !== "string" || value.length < minSecretLength) continue
    for (const form of formsOf(value)) {
      forms.add(form)
      if (form.length >= minFragmentedLength) {
        for (let i = 0; i + fragmentLength <= form.length; i++) {
          const gram = form.slice(i, i + fragmentLength)
          if (isKeyLike(gram)) grams.add(gram)
        }
      }
    }
  }
  if (forms.size === 0) return { scrub: (text) => text, size: 0 }
  // longest first, so a form containing another is replaced whole
  const ordered = Array.from(forms).sort((a, b) => b.length - a.length)
  const present = (text: string) => ordered.some((form) => text.includes(form))
  // the fragments are found with a rolling hash of every window of the
  // text (no string built per position), each hit checked for real
  const hashes = new Set<number>()
  for (const gram of grams) hashes.add(hashOf(gram, 0))
  const fragments = (text: string): string => {
    if (grams.size === 0 || text.length < fragmentLength) return text
    let out = ""
    let copied = 0
    let coverEnd = -1
    let coverStart = -1
    let h = hashOf(text, 0)
    for (let i = 0; i + fragmentLength <= text.length; i++) {
      if (i > 0) h = roll(h, text.charCodeAt(i - 1), text.charCodeAt(i + fragmentLength - 1))
      if (!hashes.has(h) || !grams.has(text.slice(i, i + fragmentLength))) continue
      if (i > coverEnd) {
        if (coverStart >= 0) {
          out += text.slice(copied, coverStart) + REDACTED
          copied = coverEnd
        }
        coverStart = i
      }
      coverEnd = i + fragmentLength
    }
    if (coverStart < 0) return text
    return out + text.slice(copied, coverStart) + REDACTED + text.slice(coverEnd)
  }
  const scrub = (text: string): string => {
    if (typeof text !== "string" || text === "") return text
    let out = text
    for (const form of ordered) if (out.includes(form)) out = out.split(form).join(REDACTED)
    out = fragments(out)
    return present(out) ? "[redacted: the text held a secret]" : out
  }
  return { scrub, size: forms.size }
}
