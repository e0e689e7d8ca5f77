/**
 * The data directory's lock: a second store on the same directory fails to open with StorageLocked (two
 * writers would damage the log) until the first one closes, or its process dies (a crash of the disk).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, it, assert } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { Disk, MemoryDisk, NodeDisk, Prng, type DiskService } from "@vellum/platform"
import { ExpectedVersion, make, type StorageConfig } from "../src/index.js"
import { baseConfig, evs } from "./streams-harness.js"

/** Opens a store in a scope of its own, so the test decides when it closes. */
const open = (disk: DiskService, config: StorageConfig) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const opened = yield* Effect.exit(make(config).pipe(Effect.provideService(Disk, disk), Scope.extend(scope)))
    if (Exit.isFailure(opened)) yield* Scope.close(scope, Exit.void)
    return { opened, close: Scope.close(scope, Exit.void) }
  })

const lockedError = (exit: Exit.Exit<unknown, { readonly _tag: string }>) => {
  assert.isTrue(Exit.isFailure(exit), "the second open should fail")
  const error = Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined
  assert.strictEqual(error?._tag, "StorageLocked", `expected StorageLocked, got ${JSON.stringify(exit)}`)
  return error as { readonly _tag: "StorageLocked"; readonly message: string; readonly path: string }
}

describe("store: data directory lock", () => {
  it.effect("in memory: a second open fails until the first closes; a crash frees it", () =>
    Effect.gen(function* () {
      const mem = new MemoryDisk()
      const config = baseConfig()
      const first = yield* open(mem.service, config)
      assert.isTrue(Exit.isSuccess(first.opened))
      const second = yield* open(mem.service, config)
      assert.match(lockedError(second.opened).message, /the data directory \/db is in use by another node/)
      yield* first.close
      const third = yield* open(mem.service, config)
      assert.isTrue(Exit.isSuccess(third.opened))
      if (Exit.isSuccess(third.opened)) yield* third.opened.value.append("s", ExpectedVersion.Any, evs(1, 2))
      // Power loss: the process holding the lock is gone; its late close must not free the new holder's lock.
      mem.crash(new Prng(1), "strict")
      const fourth = yield* open(mem.service, config)
      assert.isTrue(Exit.isSuccess(fourth.opened))
      yield* third.close
      lockedError((yield* open(mem.service, config)).opened)
      yield* fourth.close
    })
  )

  it.effect("on the real disk: the second open names the lock file and this process's pid", () =>
    Effect.gen(function* () {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vellum-store-lock-"))
      try {
        const config = { ...baseConfig(), dir }
        const first = yield* open(NodeDisk.make, config)
        assert.isTrue(Exit.isSuccess(first.opened))
        const error = lockedError((yield* open(NodeDisk.make, config)).opened)
        const lockFile = path.join(dir, "vellum.lock")
        assert.strictEqual(error.path, lockFile)
        assert.include(error.message, `lock ${lockFile}: held by this process (pid ${process.pid})`)
        yield* first.close
        assert.isFalse(fs.existsSync(lockFile), "closing removes the lock file")
        const again = yield* open(NodeDisk.make, config)
        assert.isTrue(Exit.isSuccess(again.opened))
        yield* again.close
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    })
  )
})
