import { engineOverhead, concurrency, scaling, persistence } from "../benchmarks.js"
const t = performance.now()
console.log(await engineOverhead({ budget: 2000 }))
console.log(await engineOverhead({ budget: 2000 }))
console.log("ms", performance.now() - t)
console.log(JSON.stringify(scaling({ candidates: [100, 1000], examples: [100, 1000], minMs: 50 }), null, 1))
console.log(await persistence({ candidates: 1000, examples: 1000, cacheEntries: 100000 }))
