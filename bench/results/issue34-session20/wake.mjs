// a large heap, touched at random: like a runtime walking many objects
const big = Array.from({ length: 200000 }, (_, i) => ({ i, s: "x" + i, next: null }))
for (let i = 0; i < big.length; i++) big[i].next = big[(i * 7919) % big.length]
let seed = 1
const work = () => { let n = 0, p = big[(seed = (seed * 48271) % 2147483647) % big.length]; for (let k = 0; k < 2000; k++) { n += p.i; p = p.next } return n }
for (let i = 0; i < 2000; i++) work()
const q = (res) => { res.sort((a, b) => a - b); return `median ${(res[res.length >> 1]*1000).toFixed(1)}µs p90 ${(res[Math.floor(res.length * 0.9)]*1000).toFixed(1)}µs` }
const hot = []; for (let i = 0; i < 500; i++) { const s = performance.now(); work(); hot.push(performance.now() - s) }
console.log("back to back      ", q(hot))
for (const ms of [1, 5, 20, 50]) {
  const cold = []
  for (let i = 0; i < 60; i++) { await new Promise((r) => setTimeout(r, ms)); const s = performance.now(); work(); cold.push(performance.now() - s) }
  console.log(`after sleep ${String(ms).padStart(2)} ms  `, q(cold))
}
