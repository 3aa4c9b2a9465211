import { Effect } from "effect"
import { makeTask } from "./task.js"
import * as Gepa from "../src/Gepa.js"
const task = makeTask({ components: 2, keywordsPerComponent: 8, trainSize: 40, valSize: 12, learnPermille: 300 })
const r = await Effect.runPromise(Gepa.optimize({ seedCandidate: task.seedCandidate, trainset: task.trainset, valset: task.valset, adapter: task.adapter, reflectionModel: task.reflectionModel, maxMetricCalls: 500, merge: true, seed: 0 }))
console.log(r.totalMetricCalls, r.stopReason)
