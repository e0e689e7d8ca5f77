/**
 * npm run bench:projections-execution — a user projection's execution phase (packages/projections/src/execution):
 * the counting projection `fromAll().when({$init: () => ({c: 0}), $any: (s, e) => { s.c++ }})` through its
 * `ProjectionHandler.process`, batches of 100 and 500 items of ~150 B JSON events, one partition (the live state
 * goes on between items). Events/s, beside where the time goes, measured in the same run:
 *
 *   - `encode`: building the batch text on the host (no sandbox);
 *   - `runner`: the sandbox's batch runner calling an empty global function per item (the crossing, the batch
 *     parse and the per-item clock and seed, without our prelude);
 *   - `handler`: the whole `process` call;
 *   - `body`: the same with a handler that reads `e.body` (the lazy JSON parse of each event).
 *
 * Options: --quick (0.5 s windows), --duration S (default 2).
 */
import { Effect, Exit, Scope } from "effect"
import { EventFlags, RecordKind, type EventRecord } from "@vellum/storage"
import { loadScriptProjection, Sandbox, type HandlerItem, type SourceItem } from "@vellum/projections"
import { processItemJson } from "../../packages/projections/src/execution/itemCodec.js"
import { commandLine, now, print } from "./benchSupport.js"

const { has, value: argValue } = commandLine()
const durationSec = Number(argValue("--duration") ?? (has("--quick") ? 0.5 : 2))

const record = (i: number): EventRecord => ({
  kind: RecordKind.Event,
  logPosition: 1000 + i * 300,
  flags: EventFlags.Json,
  eventNumber: i,
  createdMicros: 1_700_000_000_000_000 + i * 1000,
  eventId: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
  stream: `order-${i % 1000}`,
  eventType: "OrderPlaced",
  data: Buffer.from(JSON.stringify({ orderId: `order-${i}`, amount: i % 977, currency: "EUR", lines: [1, 2, 3] })),
  metadata: Buffer.from('{"$correlationId":"c-1"}')
})

const itemOf = (i: number): SourceItem => {
  const event = record(i)
  return {
    kind: "event",
    event,
    link: undefined,
    tag: { kind: "position", phase: 0, commit: event.logPosition, prepare: event.logPosition },
    logPosition: event.logPosition,
    category: null,
    partitionStream: event.stream
  }
}

const rate = (batch: number, run: () => void): number => {
  const start = now()
  let events = 0
  while (now() - start < durationSec) {
    run()
    events += batch
  }
  return Math.round(events / (now() - start))
}

const measure = (query: string, batch: number) =>
  Effect.gen(function* () {
    const { handler } = yield* loadScriptProjection("bench", query, {
      compilationTimeoutMillis: 500,
      executionTimeoutMillis: 250
    })
    const sources = Array.from({ length: batch }, (_, i) => itemOf(i))
    let first = true
    const items = (): Array<HandlerItem> =>
      sources.map((source, i) => (i === 0 && first ? { source, partition: "", state: "" } : { source, partition: "" }))
    return rate(batch, () => {
      Effect.runSync(handler.process(items()))
      first = false
    })
  })

const runnerOnly = (batch: number) =>
  Effect.gen(function* () {
    const sandbox = yield* Sandbox.make("runner")
    yield* sandbox.compile("function nothing(item) { return 0 }")
    const text = JSON.stringify(
      Array.from({ length: batch }, (_, i) => [
        i,
        0,
        "",
        null,
        null,
        ["OrderPlaced", "order-1", i, "id", 1, "{}", null, null, null]
      ])
    )
    const clock = Array.from({ length: batch }, () => 0)
    return rate(batch, () => Effect.runSync(sandbox.runBatch("nothing", { items: text, now: clock, seed: clock })))
  })

const main = Effect.gen(function* () {
  const scope = yield* Scope.make()
  for (const batch of [100, 500]) {
    const counting = yield* Scope.extend(
      measure("fromAll().when({$init:()=>({c:0}),$any:(s,e)=>{s.c++}})", batch),
      scope
    )
    const body = yield* Scope.extend(
      measure("fromAll().when({$init:()=>({c:0}),$any:(s,e)=>{s.c += e.body.amount}})", batch),
      scope
    )
    const runner = yield* Scope.extend(runnerOnly(batch), scope)
    const sources = Array.from({ length: batch }, (_, i) => itemOf(i))
    const { processItemJson } = yield* Effect.promise(
      () => import("../../packages/projections/src/execution/itemCodec.js")
    )
    const encode = rate(batch, () => {
      const parts = sources.map((source, i) => processItemJson({ source, partition: "" }, i))
      if (parts.join(",").length === 0) throw new Error("empty")
    })
    print({
      bench: "projections-execution",
      batch,
      handlerEventsPerSec: counting,
      bodyEventsPerSec: body,
      runnerEventsPerSec: runner,
      encodeEventsPerSec: encode
    })
  }
  yield* Scope.close(scope, Exit.void)
})

Effect.runPromise(main).catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
