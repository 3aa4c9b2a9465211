/**
 * Reading a reflection answer: its top-level fenced blocks (nested fences
 * with an info string stay inside), and the openings that mark a refusal or
 * a conversational preamble rather than a text.
 *
 * @internal
 */
import { at } from "../../shared/invariant.js"

export interface Block {
  readonly content: string
  readonly closed: boolean
}

const OPENING = /^ {0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)[^`]*$/
const closingOf = (line: string): { readonly char: string; readonly length: number } | undefined => {
  const m = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(line)
  if (m === null) return undefined
  const fence = at(m, 1)
  return { char: fence.charAt(0), length: fence.length }
}

/**
 * Top-level fenced blocks of a markdown text. A block opened by N fence
 * characters closes at a bare fence of the same character at least N long.
 * Inside a block, a fence line with an info string (such as ```python)
 * opens a nested block whose bare closing fence does not end the outer one,
 * so code examples inside the proposed text survive.
 */
export const fencedBlocks = (text: string): ReadonlyArray<Block> => {
  const lines = text.split(/\r?\n/)
  const blocks: Array<Block> = []
  let i = 0
  while (i < lines.length) {
    const open = OPENING.exec(at(lines, i))
    if (open === null) {
      i++
      continue
    }
    const fence = at(open, 1)
    const char = fence.charAt(0)
    const length = fence.length
    const body: Array<string> = []
    let depth = 0
    let closed = false
    i++
    for (; i < lines.length; i++) {
      const line = at(lines, i)
      const close = closingOf(line)
      if (close !== undefined && close.char === char && close.length >= length) {
        if (depth === 0) {
          closed = true
          i++
          break
        }
        depth--
      } else {
        const nested = OPENING.exec(line)
        if (nested !== null && nested[2] !== "" && at(nested, 1).charAt(0) === char && at(nested, 1).length >= length) depth++
      }
      body.push(line)
    }
    blocks.push({ content: body.join("\n"), closed })
  }
  return blocks
}

export const REFUSAL = /^(i'?m sorry|i am sorry|sorry,|i can(?:no|')t|i am unable|i'?m unable|as an ai\b)/i
export const PREAMBLE = /^(sure|certainly|of course|okay|ok|here(?:'s| is| are)|below is)\b/i
