import { describe, it, assert } from "@effect/vitest"
import { Effect, Scope, Exit } from "effect"
import { MemoryDisk, Disk } from "@vellum/platform"
import { defaultStorageConfig, make } from "../src/index.js"

const cfg = { ...defaultStorageConfig("/db"), chunkSize: 4096, memtableMaxEntries: 16, preallocateChunks: false }
const ev = (i: number) => ({
  eventId: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
  eventType: "T",
  isJson: true,
  data: Buffer.from(`{"i":${i}}`),
  metadata: Buffer.alloc(0)
})

describe("smoke", () => {
  it.effect("append, read, restart", () =>
    Effect.gen(function* () {
      const mem = new MemoryDisk()
      const open = Effect.gen(function* () {
        const scope = yield* Scope.make()
        const store = yield* make(cfg).pipe(Effect.provideService(Disk, mem.service), Scope.extend(scope))
        return { store, scope }
      })
      const a = yield* open
      for (let i = 0; i < 200; i++) yield* a.store.append(`s-${i % 7}`, -2, [ev(i)])
      const r = yield* a.store.readStreamForward("s-3", 0, 100)
      assert.strictEqual(r._tag, "Success")
      if (r._tag === "Success") assert.strictEqual(r.events.length, 29)
      const all = yield* a.store.readAllForward(0, 4096)
      assert.strictEqual(all.events.filter((e) => e.event!.stream.startsWith("s-")).length, 200)
      yield* Scope.close(a.scope, Exit.void)
      const b = yield* open
      const r2 = yield* b.store.readStreamBackward("s-3", -1, 5)
      assert.strictEqual(r2._tag, "Success")
      if (r2._tag === "Success")
        assert.deepStrictEqual(
          r2.events.map((e) => e.event!.eventNumber),
          [28, 27, 26, 25, 24]
        )
      const back = yield* b.store.readAllBackward(-1, 4096)
      assert.strictEqual(back.events.filter((e) => e.event!.stream.startsWith("s-")).length, 200)
    })
  )
})
