/**
 * Append bodies parsed on a worker thread, so that a large one (the lenient JSON reader and the XML
 * converter take up to a few hundred milliseconds per MiB) does not hold up every other request on the
 * event loop. Small bodies stay on the event loop: the hop costs more than they take to parse.
 *
 * One worker, started on first use and stopped with the scope; jobs queue in its message port. If it
 * dies, the requests it had are answered 500 and the next large body starts a new one.
 */
import { createRequire } from "node:module"
import { pathToFileURL } from "node:url"
import { Worker } from "node:worker_threads"
import { Effect, type Scope } from "effect"
import type { AppendBodyParser } from "../HttpConfig.js"
import type { BodyResult } from "../streams/appendBody.js"
import { unpackEvents, type PackedEvents } from "../streams/packedEvents.js"

export interface ParseJob {
  readonly id: number
  readonly body: Uint8Array
  readonly requestType: string
  readonly headerId: string | undefined
  readonly headerType: string | undefined
}

export type ParseOutcome =
  | { readonly id: number; readonly _tag: "Events"; readonly packed: PackedEvents }
  | { readonly id: number; readonly _tag: "Invalid"; readonly message: string }
  | { readonly id: number; readonly _tag: "Failed"; readonly message: string }

/** Bodies from this size on go to the worker (about a millisecond of parsing on the event loop). */
export const OFF_THREAD_MIN_BODY_BYTES = 64 * 1024

/**
 * The worker's module: the bundle's `append-body-worker.mjs` beside the bundled node (scripts/build.mjs),
 * or, when running from TypeScript sources, a bootstrap that registers tsx's loader in the worker and then
 * imports `appendBodyWorker.ts` beside this file.
 */
const workerModule = (): URL => {
  const self = import.meta.url
  if (!self.endsWith(".ts")) return new URL("./append-body-worker.mjs", self)
  // The ESM build of `tsx/esm/api` (require.resolve would give its CommonJS one).
  const tsxApi = new URL("dist/esm/api/index.mjs", pathToFileURL(createRequire(self).resolve("tsx/package.json"))).href
  const source = `import { register } from ${JSON.stringify(tsxApi)}\nregister()\nawait import(${JSON.stringify(new URL("./appendBodyWorker.ts", self).href)})\n`
  return new URL(`data:text/javascript,${encodeURIComponent(source)}`)
}

type Settle = (outcome: ParseOutcome | Error) => void

export const makeOffThreadParser = (
  options: { readonly minBodyBytes?: number } = {}
): Effect.Effect<AppendBodyParser, never, Scope.Scope> =>
  Effect.gen(function* () {
    let worker: Worker | undefined
    let nextId = 0
    const pending = new Map<number, Settle>()

    const started = (): Worker => {
      if (worker !== undefined) return worker
      const created = new Worker(workerModule())
      created.unref()
      created.on("message", (outcome: ParseOutcome) => {
        const settle = pending.get(outcome.id)
        pending.delete(outcome.id)
        settle?.(outcome)
      })
      const fail = (error: Error) => {
        if (worker === created) worker = undefined
        for (const settle of pending.values()) settle(error)
        pending.clear()
      }
      created.on("error", fail)
      created.on("exit", (code) => fail(new Error(`the append body worker stopped (exit code ${code})`)))
      worker = created
      return created
    }

    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        const running = worker
        worker = undefined
        if (running !== undefined) await running.terminate()
      })
    )

    const parse = (
      body: Uint8Array,
      requestType: string,
      headerId: string | undefined,
      headerType: string | undefined
    ): Effect.Effect<BodyResult> =>
      Effect.async<BodyResult>((resume) => {
        const id = nextId++
        pending.set(id, (outcome) => {
          if (outcome instanceof Error) return resume(Effect.die(outcome))
          switch (outcome._tag) {
            case "Events":
              return resume(Effect.succeed({ _tag: "Events", events: unpackEvents(outcome.packed) }))
            case "Invalid":
              return resume(Effect.succeed({ _tag: "Invalid", message: outcome.message }))
            case "Failed":
              return resume(Effect.die(new Error(`parsing the append body failed: ${outcome.message}`)))
          }
        })
        // A copy goes over (transferred): the request keeps its body for metrics and logs.
        const copy = new Uint8Array(body)
        const job: ParseJob = { id, body: copy, requestType, headerId, headerType }
        started().postMessage(job, [copy.buffer])
        return Effect.sync(() => pending.delete(id))
      })

    return { minBodyBytes: options.minBodyBytes ?? OFF_THREAD_MIN_BODY_BYTES, parse }
  })
