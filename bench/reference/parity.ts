/**
 * Parity check of bench/task.ts against its Python port
 * (bench/reference/task.py): prints, for fixed inputs, the id -> category
 * scatter, adapter scores and feedback for a few fixed candidate texts, the
 * reflective dataset records, FNV-1a hashes and the simulated reflection
 * model's answers to fixed prompt texts. bench/reference/parity.py prints the
 * same lines from the Python port; the outputs must be identical:
 *
 *   diff <(python3 bench/reference/parity.py) <(npx tsx bench/reference/parity.ts)
 */
import { Effect } from "effect"
import type { Candidate } from "../../src/Candidate.js"
import { fnv, makeTask } from "../task.js"

const task = makeTask({ components: 2, keywordsPerComponent: 16, trainSize: 120, valSize: 30, testSize: 300, learnPermille: 300 })
const testset = Array.from({ length: 300 }, (_, i) => i + 150)
const categoryOf = (id: number) => (Math.imul(id, 2654435761) >>> 0) % 32

const kwList = (component: number, n: number) => Array.from({ length: n }, (_, k) => `c${component}k${k} `).join("")

const candidates: ReadonlyArray<readonly [string, Candidate]> = [
  ["seed", task.seedCandidate],
  ["some", { component_0: "[c0] know: c0k0 c0k1 c0k2 | v1", component_1: "[c1] know: c1k5 | v9" }],
  ["all of c0", { component_0: `[c0] know: ${kwList(0, 16)}| v2`, component_1: "[c1] know: | v0" }],
  ["everything", { component_0: `[c0] know: ${kwList(0, 16)}| v3`, component_1: `[c1] know: ${kwList(1, 16)}| v4` }],
  ["no trailing space", { component_0: "[c0] know: c0k3| v5", component_1: "[c1] know:c1k3 | v6" }]
]

const prompts = [
  "",
  "no component here",
  "```\n[c0] know: | v0\n```\nWrong: the instructions must mention 'c0k3'. Wrong: the instructions must mention 'c1k2'.",
  "[c1] know: c1k2 | v77\nmust mention 'c1k2' then must mention 'c0k1' then must mention 'c1k9' and 'c1k4'",
  "[c0] know: c0k1  c0k2 | v3 must mention 'c0k7' must mention 'c0k8' é ü 𝄞",
  ...Array.from({ length: 40 }, (_, i) => `[c${i % 2}] know: | v${i}\nmust mention 'c${i % 2}k${i % 16}'`)
]

const f6 = (x: number) => x.toFixed(6)
const line = (x: unknown) => console.log(JSON.stringify(x))
const meanOn = (examples: ReadonlyArray<{ readonly id: number; readonly category: number }>, c: Candidate) =>
  Effect.runSync(task.adapter.evaluate(examples, c, { captureTraces: false })).scores.reduce((a, b) => a + b, 0) / examples.length

line({ categories: task.trainset.slice(0, 40).map((e) => e.category) })
line({ val: task.valset.map((e) => e.category), test_head: testset.slice(0, 20).map(categoryOf) })
for (const [name, c] of candidates) {
  const ev = Effect.runSync(task.adapter.evaluate(task.trainset.slice(0, 12), c, { captureTraces: true }))
  line({
    candidate: name,
    train: f6(meanOn(task.trainset, c)),
    val: f6(task.trueScore(c)),
    test: f6(task.testScore(c)),
    minibatch_scores: ev.scores.map(f6),
    outputs: ev.outputs
  })
  const records = Effect.runSync(Effect.flatMap(
    task.adapter.evaluate(task.trainset.slice(0, 3), c, { captureTraces: true }),
    (e) => task.adapter.makeReflectiveDataset(c, e, ["component_1"])
  ))
  line({ candidate: name, records })
}
for (const p of prompts) {
  const answer = Effect.runSync(task.reflectionModel.complete(p)).text
  line({ fnv: fnv(p), answer })
}

// one component owning every keyword (run.py --task 1x32)
const one = makeTask({ components: 1, keywordsPerComponent: 32, trainSize: 120, valSize: 30, testSize: 300, learnPermille: 300 })
line({ one: one.trainset.slice(0, 40).map((e) => e.category), seed: one.seedCandidate })
for (const c of [one.seedCandidate, { component_0: `[c0] know: ${Array.from({ length: 11 }, (_, k) => `c0k${3 * k} `).join("")}| v1` }]) {
  const ev = Effect.runSync(one.adapter.evaluate(one.trainset.slice(0, 12), c, { captureTraces: true }))
  line({ one_val: f6(one.trueScore(c)), one_test: f6(one.testScore(c)), scores: ev.scores.map(f6), outputs: ev.outputs })
}
for (let i = 0; i < 20; i++) {
  const p = `[c0] know: | v${i}\nmust mention 'c0k${i}' must mention 'c0k${31 - i}'`
  line({ one_answer: Effect.runSync(one.reflectionModel.complete(p)).text })
}

// a rewrite that may drop a keyword it had (run.py --task 1x32r, forgetPermille)
const forgets = makeTask({ components: 1, keywordsPerComponent: 32, trainSize: 120, valSize: 30, testSize: 300, learnPermille: 300, forgetPermille: 150 })
for (let i = 0; i < 40; i++) {
  const known = Array.from({ length: 32 }, (_, k) => k).filter((k) => k >= i % 7 && (k - (i % 7)) % 5 === 0).map((k) => `c0k${k} `).join("")
  const p = `[c0] know: ${known}| v${i}\nmust mention 'c0k${(3 * i) % 32}'`
  line({ forget_answer: Effect.runSync(forgets.reflectionModel.complete(p)).text })
}
