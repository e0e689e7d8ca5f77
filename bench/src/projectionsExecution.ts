/**
 * npm run bench:projections-execution — a user projection's execution phase (packages/projections/src/execution):
 * the counting projection `fromAll().when({$init: () => ({c: 0}), $any: (s, e) => { s.c++ }})` through its
 * `ProjectionHandler.process`, in batches of 100 and 500 items of ~110-byte JSON events, one partition (the live
 * state goes on between items). Beside it, measured in the same run, interleaved batch by batch:
 *
 *   - `body`: a handler that reads `e.body` (the lazy JSON parse of each event);
 *   - `noHandler`: `fromAll()` alone (no envelope, no serializer: the state is the data text);
 *   - `runner`: the same batch text through the sandbox's batch runner into an empty function (the crossing, the
 *     batch parse and the per-item clock and seed, without the execution prelude);
 *   - `encode`: building the batch text on the host.
 *
 * Each figure is events/s of the fastest batch and of the median one (the machine is shared: the fastest is the
 * one least disturbed). Options: --quick (fewer rounds), --rounds N (default 40).
 */
import { Effect } from "effect"
import { loadScriptProjection, Sandbox, type ProjectionHandler } from "@vellum/projections"
import { processItemJson } from "../../packages/projections/src/execution/itemCodec.js"
import { commandLine, median, now, print } from "./benchSupport.js"
import { itemOf } from "./projectionsHandlerRate.js"

const { has, value: argValue } = commandLine()
const rounds = Number(argValue("--rounds") ?? (has("--quick") ? 10 : 40))

const queries = {
  counting: "fromAll().when({$init:()=>({c:0}),$any:(s,e)=>{s.c++}})",
  body: "fromAll().when({$init:()=>({c:0}),$any:(s,e)=>{s.c+=e.body.amount}})",
  noHandler: "fromAll()"
}

const timed = (run: () => void): number => {
  const start = now()
  run()
  return now() - start
}

const measure = (batch: number) =>
  Effect.scoped(
    Effect.gen(function* () {
      const sources = Array.from({ length: batch }, (_, i) => itemOf(i))
      const handlers: Array<[string, ProjectionHandler]> = []
      for (const [name, query] of Object.entries(queries)) {
        const { handler } = yield* loadScriptProjection("bench", query, {
          compilationTimeoutMillis: 500,
          executionTimeoutMillis: 250
        })
        Effect.runSync(handler.process(sources.map((source) => ({ source, partition: "", state: "" }))))
        handlers.push([name, handler])
      }
      const sandbox = yield* Sandbox.make("runner")
      yield* sandbox.compile("function nothing(item) { return 0 }")
      const encode = () => `[${sources.map((source, i) => processItemJson({ source, partition: "" }, i)).join(",")}]`
      const text = encode()
      const clock = sources.map(() => 0)
      const times = new Map<string, Array<number>>()
      const record = (name: string, seconds: number) => times.set(name, [...(times.get(name) ?? []), seconds])
      for (let round = 0; round < rounds; round++) {
        for (const [name, handler] of handlers)
          record(
            name,
            timed(() => Effect.runSync(handler.process(sources.map((source) => ({ source, partition: "" })))))
          )
        record(
          "runner",
          timed(() => Effect.runSync(sandbox.runBatch("nothing", { items: text, now: clock, seed: clock })))
        )
        record("encode", timed(encode))
      }
      const figures: Record<string, number> = {}
      for (const [name, seconds] of times) {
        figures[`${name}Best`] = Math.round(batch / Math.min(...seconds))
        figures[`${name}Median`] = Math.round(batch / median(seconds))
      }
      print({ bench: "projections-execution", batch, ...figures })
    })
  )

Effect.runPromise(Effect.forEach([100, 500], measure, { discard: true })).catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
