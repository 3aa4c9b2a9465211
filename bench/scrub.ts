/**
 * The cost of the scrub every model layer applies to every text it hands
 * out (`Secrets.scrub`): `npx tsx bench/scrub.ts` times it on answers of
 * 200, 2,000 and 20,000 characters with 0, 1 and 4 registered keys of 51
 * characters (OpenAI's length), median of 7 rounds, and writes
 * bench/results/scrub.json.
 */
import { Redacted } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Secrets from "../src/Secrets.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789"
const randomKey = () => {
  let key = "sk-proj-"
  for (let i = 0; i < 43; i++) key += alphabet[Math.floor(Math.random() * alphabet.length)]
  return key
}

const prose = (length: number) => {
  const words = ["the", "ticket", "is", "about", "billing", "refund", "account", "password", "please", "route", "it", "to"]
  let out = ""
  while (out.length < length) out += `${words[Math.floor(Math.random() * words.length)]} `
  return out.slice(0, length)
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const rows: Array<{ keys: number; chars: number; microsPerCall: number }> = []
for (const keys of [0, 1, 4]) {
  Secrets.unsafeClear()
  for (let k = 0; k < keys; k++) Secrets.registerSync(Redacted.make(randomKey()))
  for (const chars of [200, 2_000, 20_000]) {
    const texts = Array.from({ length: 16 }, () => prose(chars))
    const calls = Math.max(50, Math.round(2_000_000 / chars))
    const rounds: Array<number> = []
    for (let round = 0; round < 7; round++) {
      const start = performance.now()
      let sink = 0
      for (let i = 0; i < calls; i++) sink += Secrets.scrub(texts[i % texts.length]!).length
      rounds.push(((performance.now() - start) * 1000) / calls)
      if (sink < 0) console.log(sink)
    }
    rows.push({ keys, chars, microsPerCall: Number(median(rounds).toFixed(2)) })
  }
}

// a loop that only reads each character: the floor any scan pays, to
// read the figures against on a busy machine
const floor = (() => {
  const text = prose(20_000)
  const rounds: Array<number> = []
  for (let round = 0; round < 7; round++) {
    let sink = 0
    const start = performance.now()
    for (let r = 0; r < 20; r++) for (let i = 0; i < text.length; i++) sink += text.charCodeAt(i) & 7
    rounds.push(((performance.now() - start) * 1000) / 20)
    if (sink < 0) console.log(sink)
  }
  return Number(median(rounds).toFixed(2))
})()

console.log(`reading 20,000 characters once: ${floor} µs`)
console.log("| keys | answer length | µs per scrub |\n| --- | --- | --- |")
for (const r of rows) console.log(`| ${r.keys} | ${r.chars} | ${r.microsPerCall} |`)
fs.mkdirSync(path.join(root, "bench", "results"), { recursive: true })
fs.writeFileSync(
  path.join(root, "bench", "results", "scrub.json"),
  JSON.stringify({ node: process.version, date: new Date().toISOString(), readOnce20kMicros: floor, rows }, null, 2) + "\n"
)
