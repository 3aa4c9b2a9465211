/**
 * A task for `optimizeAnything` whose side information is a long list of
 * records (bench/sideInfo.ts): the artifact is a rule book that classifies
 * the files of a manifest (`g07/*.ts => test`, first match wins; files no
 * rule matches get their extension's default class). An example is a
 * manifest of 100 files; the score is the share classified right. The
 * evaluator reports a summary line and every file as a record with several
 * fields (`file`, `expected`, `predicted`, `rule`, `ok`, `owner`, `size`,
 * `reason`): about 40 of them fail at the start.
 *
 * The reflection model is simulated: it reads every record the prompt shows
 * whole enough to hold a file's path and its expected class, and for each
 * (directory, extension) it sees misclassified without a rule, writes the
 * rule with a seeded probability (`learnPermille`, hashed from the prompt
 * and the pair); otherwise it only rewrites a nonce. A reflection that sees
 * the records can fix many at once; one that sees two cut records, two at
 * most. Rules generalize: held-out manifests hold other files of the same
 * directories.
 */
import { Effect } from "effect"
import * as LanguageModel from "../src/LanguageModel.js"
import { fnv } from "./task.js"

export interface ManifestTaskOptions {
  /** directories g00, g01, ... */
  readonly groups: number
  readonly filesPerManifest: number
  /** manifests */
  readonly trainSize: number
  readonly valSize: number
  readonly testSize: number
  /** chance (per 1000) that the reflection writes the rule of a misclassified pair it sees */
  readonly learnPermille: number
}

export const defaultManifestOptions: ManifestTaskOptions = {
  groups: 24,
  filesPerManifest: 100,
  trainSize: 24,
  valSize: 12,
  testSize: 60,
  learnPermille: 300
}

const EXTENSIONS = ["ts", "md", "json", "sh"] as const
const DEFAULT_CLASS: Readonly<Record<string, string>> = { ts: "source", md: "docs", json: "config", sh: "script" }
const CLASSES = ["source", "test", "docs", "config", "script", "fixture"] as const

export interface Manifest {
  readonly id: number
  readonly files: ReadonlyArray<string>
}

export const seedText = "# rules: first match wins; files no rule matches get their extension's default class\n# v0"

const pad = (n: number, width: number) => String(n).padStart(width, "0")

/** the class a (directory, extension) really has: 45 % of them differ from the extension's default */
export const trueClass = (group: number, ext: string): string => {
  const h = fnv(`class|${group}|${ext}`)
  if (h % 100 >= 45) return DEFAULT_CLASS[ext]!
  const others = CLASSES.filter((c) => c !== DEFAULT_CLASS[ext])
  return others[(h >>> 8) % others.length]!
}

const parse = (path: string) => {
  const m = /^g(\d+)\/f\d+\.(\w+)$/.exec(path)!
  return { group: Number(m[1]), ext: m[2]! }
}

/** the rules of a text: `gNN/*.ext => class` lines, in order */
export const rulesOf = (text: string): ReadonlyArray<{ readonly group: number; readonly ext: string; readonly cls: string; readonly line: string }> =>
  Array.from(text.matchAll(/^g(\d+)\/\*\.(\w+) => (\w+)$/gm), (m) => ({ group: Number(m[1]), ext: m[2]!, cls: m[3]!, line: m[0] }))

export const makeManifestTask = (options: ManifestTaskOptions) => {
  const manifest = (id: number): Manifest => ({
    id,
    files: Array.from({ length: options.filesPerManifest }, (_, i) => {
      const h = fnv(`file|${id}|${i}`)
      return `g${pad(h % options.groups, 2)}/f${pad((h >>> 8) % 1000, 3)}.${EXTENSIONS[(h >>> 20) % EXTENSIONS.length]}`
    })
  })
  const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => manifest(from + i))
  const dataset = range(0, options.trainSize)
  const valset = range(options.trainSize, options.valSize)
  const testset = range(options.trainSize + options.valSize, options.testSize)

  type Rules = ReturnType<typeof rulesOf>
  const classify = (rules: Rules, path: string) => {
    const { ext, group } = parse(path)
    const rule = rules.find((r) => r.group === group && r.ext === ext)
    return rule === undefined ? { cls: DEFAULT_CLASS[ext]!, rule: `default for .${ext}` } : { cls: rule.cls, rule: rule.line }
  }

  const score = (rules: Rules, m: Manifest) => m.files.filter((f) => classify(rules, f).cls === trueClass(parse(f).group, parse(f).ext)).length / m.files.length

  const evaluate = (text: string, m: Manifest) =>
    Effect.sync(() => {
      const rules = rulesOf(text)
      const files = m.files.map((file) => {
        const { ext, group } = parse(file)
        const expected = trueClass(group, ext)
        const { cls, rule } = classify(rules, file)
        const ok = cls === expected
        return {
          file,
          expected,
          predicted: cls,
          rule,
          ok,
          owner: `team-${group % 5}`,
          size: 200 + (fnv(file) % 9000),
          reason: ok ? `classified by ${rule}` : `classified as '${cls}' by ${rule}; the manifest lists it as '${expected}'`
        }
      })
      const wrong = files.filter((f) => !f.ok).length
      const byRule = files.filter((f) => !f.rule.startsWith("default")).length
      const score = (files.length - wrong) / files.length
      return {
        score,
        // objective scores for frontierType "hybrid" / "objective": accuracy, and a short rule book
        scores: { accuracy: score, brevity: Math.max(0, 1 - rules.length / (options.groups * EXTENSIONS.length)) },
        sideInfo: {
          summary: `${wrong} of ${files.length} files misclassified (${Math.round(100 * wrong / files.length)} %); ` +
            `${byRule} files matched a rule, ${files.length - byRule} fell back to their extension's default`,
          files
        }
      }
    })

  const reflectionModel = LanguageModel.fromFunction((prompt) => {
    const text = LanguageModel.promptText(prompt)
    const current = /# Current text of "[^"]+"\s+```+\n([\s\S]*?)\n```+/.exec(text)?.[1] ?? seedText
    const have = rulesOf(current)
    const h = fnv(text)
    const learned: Array<string> = []
    const seen = new Set<string>()
    // a record shows a file's path and, within the same record (before the next path), its expected class
    for (const m of text.matchAll(/\bg(\d\d)\/f\d{3}\.(\w+)\b((?:(?!\bg\d\d\/f\d{3})[\s\S]){0,120}?)\bexpected\W{1,20}?([a-z]+)/g)) {
      const group = Number(m[1])
      const ext = m[2]!
      const cls = m[4]!
      const key = `g${pad(group, 2)}/*.${ext}`
      if (seen.has(key) || !(CLASSES as ReadonlyArray<string>).includes(cls)) continue
      seen.add(key)
      if (cls === DEFAULT_CLASS[ext] || have.some((r) => r.group === group && r.ext === ext)) continue
      if (fnv(`${h}|${key}`) % 1000 < options.learnPermille) learned.push(`${key} => ${cls}`)
    }
    const kept = current.split("\n").filter((l) => !l.startsWith("# v"))
    return "```\n" + [...kept, ...learned, `# v${h % 100000}`].join("\n") + "\n```"
  })

  const testScore = (text: string) => {
    const rules = rulesOf(text)
    return testset.reduce((a, m) => a + score(rules, m), 0) / testset.length
  }

  return { dataset, valset, testset, evaluate, reflectionModel, testScore, seedText }
}
