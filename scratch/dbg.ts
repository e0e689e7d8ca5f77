import { runSeed } from "../simulation/src/runSeed.js"
const seed = Number(process.argv[2]); const transport = process.argv[3] as "http" | "direct"
const r = runSeed(seed, { transport, traceLines: 200000 })
const pat = new RegExp(process.argv[4] ?? ".")
console.log(r.failure)
for (const l of r.lastTrace) if (pat.test(l)) console.log(l)
