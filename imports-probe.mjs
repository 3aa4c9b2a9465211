const t0 = performance.now(); const c0 = process.cpuUsage()
const mark = async (name, f) => { const t = performance.now(); const c = process.cpuUsage(); await f(); const d = process.cpuUsage(c); console.log(name.padEnd(45), (performance.now()-t).toFixed(0).padStart(6), "ms wall", ((d.user+d.system)/1000).toFixed(0).padStart(6), "ms cpu") }
const list = process.argv.slice(2)
for (const m of list) await mark(m, () => import(m))
const d = process.cpuUsage(c0)
console.log("total".padEnd(45), (performance.now()-t0).toFixed(0).padStart(6), "ms wall", ((d.user+d.system)/1000).toFixed(0).padStart(6), "ms cpu", "uptime", (process.uptime()*1000).toFixed(0))
