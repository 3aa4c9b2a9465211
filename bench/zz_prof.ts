import { engineOverhead } from "./benchmarks.js"
const r = await engineOverhead({ budget: 4000 })
console.log(JSON.stringify(r).slice(0, 600))
