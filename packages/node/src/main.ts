/**
 * The node's entry point (`npm start`, `vellum`).
 *
 * Today it opens the storage engine on the real disk in ./data (or --db PATH), recovers it, writes this
 * start's epoch, prints what it found, and exits. The HTTP server (EventStoreDB AtomPub API on port 2113)
 * is the next issue; until it lands this says so instead of pretending to serve.
 */
import { Effect, Exit, Scope } from "effect"
import { Disk, NodeDisk } from "@vellum/platform"
import { defaultStorageConfig, make } from "@vellum/storage"
import * as path from "node:path"

const args = process.argv.slice(2)
const dbIndex = args.indexOf("--db")
const dir = path.resolve(dbIndex >= 0 && args[dbIndex + 1] !== undefined ? args[dbIndex + 1]! : "data")

const program = Effect.gen(function*() {
  const scope = yield* Scope.make()
  const store = yield* make(defaultStorageConfig(dir)).pipe(Scope.extend(scope))
  const stats = store.stats()
  const epochs = yield* store.readStreamBackward("$epoch-information", -1, 1)
  const epoch = epochs._tag === "Success" ? epochs.events[0]?.event?.eventNumber : undefined
  yield* store.flushIndex
  yield* Scope.close(scope, Exit.void)
  console.log(JSON.stringify({ msg: "Vellum storage opened", db: dir, epoch, writerPosition: stats.writerPosition, chunks: stats.chunks }))
  console.log(
    "The HTTP node (EventStoreDB AtomPub API on http://127.0.0.1:2113) is not built yet: it arrives with the next issue.\n" +
      "What runs today: the storage engine (npm test), the simulator (npm run sim -- --seed 42) and the benchmarks (npm run bench:storage)."
  )
})

Effect.runPromise(program.pipe(Effect.provideService(Disk, NodeDisk.make))).catch((error) => {
  console.error(error)
  process.exit(1)
})
