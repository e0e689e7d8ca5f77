/**
 * npm run bench:projections-sandbox — the JavaScript sandbox of user projections (packages/projections/src/runtime),
 * each figure beside a ceiling measured in the same run:
 *
 *   1. `counting`: a counting projection (`$init` gives `{count: 0}`, `$any` increments it) run over batches of 1, 100
 *      and 1000 events (~200 B of JSON each) through `Sandbox.runBatch`; events/s. Ceiling: the same handler on the
 *      host (JSON.parse of the same batch text, then the loop), which no sandbox can beat.
 *   2. `variants`: the same loop through bare QuickJS contexts (no prelude, no budget hook) of the synchronous and
 *      the asyncify builds, batches of 1000: what the build costs, apart from our wrapper.
 *   3. `memory` (run first, on a fresh process): N live sandboxes, each with the counting projection compiled and
 *      one batch run; what QuickJS itself counts per sandbox (what the memory limit counts), and RSS, V8 heap and
 *      the shared WebAssembly memory per sandbox (after full collections when run with --expose-gc).
 *
 * Options: --quick (0.5 s windows, N 50), --duration S (default 2), --sandboxes N (default 100).
 */
import { Effect, Exit, Scope } from "effect"
import { Sandbox, sandboxHeapBytes } from "@vellum/projections"
import { newQuickJSAsyncWASMModule, newQuickJSWASMModule, RELEASE_ASYNC, RELEASE_SYNC } from "quickjs-emscripten"
import { commandLine, gc, now, print } from "./benchSupport.js"

const { has, value: argValue } = commandLine()
const quick = has("--quick")
const durationSec = Number(argValue("--duration") ?? (quick ? 0.5 : 2))
const sandboxCount = Number(argValue("--sandboxes") ?? (quick ? 50 : 100))

const projection = `
  var handlers = { $init: () => ({ count: 0 }), $any: (s, e) => { s.count++; return s } }
  var state
  function handle(e) {
    if (state === undefined) state = handlers.$init()
    const next = handlers.$any(state, e)
    if (next !== undefined) state = next
  }
  function count() { return state === undefined ? 0 : state.count }`

const event = (i: number) => ({
  eventType: "OrderPlaced",
  streamId: `order-${i % 1000}`,
  sequenceNumber: i,
  eventId: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
  isJson: true,
  body: { orderId: i, customer: `c-${i % 97}`, total: (i * 37) % 1000, lines: [{ sku: "A-1", qty: 2 }] }
})
const batchText = (size: number) => JSON.stringify(Array.from({ length: size }, (_, i) => event(i)))

/** Runs `step` (which handles `perStep` events) for the window; events per second. */
const rate = (perStep: number, step: () => void): number => {
  const warmEnd = now() + Math.min(0.5, durationSec / 2)
  while (now() < warmEnd) step()
  let steps = 0
  const start = now()
  const end = start + durationSec
  while (now() < end) {
    step()
    steps++
  }
  return Math.round((steps * perStep) / (now() - start))
}

const hostCeiling = (items: string): (() => void) => {
  const handlers = {
    $init: () => ({ count: 0 }),
    $any: (s: { count: number }) => {
      s.count++
      return s
    }
  }
  let state: { count: number } | undefined
  return () => {
    for (const e of JSON.parse(items) as Array<unknown>) {
      void e
      state ??= handlers.$init()
      state = handlers.$any(state)
    }
  }
}

const counting = Effect.gen(function* () {
  for (const size of [1, 100, 1000]) {
    const items = batchText(size)
    const batch = { items, now: Array<number>(size).fill(0), seed: Array<number>(size).fill(0) }
    const sandboxRate = yield* Effect.scoped(
      Effect.gen(function* () {
        const sandbox = yield* Sandbox.make("counting")
        yield* sandbox.compile(projection)
        return rate(size, () => Effect.runSync(sandbox.runBatch("handle", batch)))
      })
    )
    const ceiling = rate(size, hostCeiling(items))
    print({
      bench: "counting",
      batch: size,
      sandboxEventsPerSec: sandboxRate,
      hostCeilingEventsPerSec: ceiling,
      ratio: Math.round((sandboxRate / ceiling) * 1000) / 1000
    })
  }
})

const bareRunner = `${projection}
  (function (items) { for (const e of JSON.parse(items)) handle(e); return count() })`

const variants = Effect.promise(async () => {
  const items = batchText(1000)
  const sync = await newQuickJSWASMModule(RELEASE_SYNC)
  const asyncify = await newQuickJSAsyncWASMModule(RELEASE_ASYNC)
  for (const [name, module] of [
    ["sync", sync],
    ["asyncify", asyncify]
  ] as const) {
    const vm = module.newContext()
    const runner = vm.unwrapResult(vm.evalCode(bareRunner))
    const text = vm.newString(items)
    const eventsPerSec = rate(1000, () => vm.unwrapResult(vm.callFunction(runner, vm.undefined, text)).dispose())
    text.dispose()
    runner.dispose()
    vm.dispose()
    print({ bench: "variants", variant: name, batch: 1000, eventsPerSec })
  }
})

const memory = Effect.gen(function* () {
  const items = batchText(100)
  const batch = { items, now: Array<number>(100).fill(0), seed: Array<number>(100).fill(0) }
  // One sandbox first, so the shared WebAssembly instance itself is not counted per sandbox.
  const scope = yield* Scope.make()
  yield* Scope.extend(Sandbox.make("first"), scope)
  gc()
  const rss0 = process.memoryUsage().rss
  const heap0 = process.memoryUsage().heapUsed
  const wasm0 = yield* sandboxHeapBytes
  let quickJsBytes = 0
  for (let i = 0; i < sandboxCount; i++) {
    const sandbox = yield* Scope.extend(Sandbox.make(`projection-${i}`), scope)
    yield* sandbox.compile(projection)
    yield* sandbox.runBatch("handle", batch)
    quickJsBytes += yield* sandbox.memoryUsedBytes()
  }
  gc()
  const used = process.memoryUsage()
  const wasm = yield* sandboxHeapBytes
  const kib = (bytes: number) => Math.round(bytes / sandboxCount / 1024)
  print({
    bench: "memory",
    sandboxes: sandboxCount,
    quickJsKiBPerSandbox: kib(quickJsBytes),
    rssKiBPerSandbox: kib(used.rss - rss0),
    v8HeapKiBPerSandbox: kib(used.heapUsed - heap0),
    wasmMemoryKiBPerSandbox: kib(wasm - wasm0),
    wasmMemoryMiBTotal: Math.round(wasm / 1024 / 1024)
  })
  yield* Scope.close(scope, Exit.void)
})

await Effect.runPromise(Effect.all([memory, counting, variants], { discard: true }).pipe(Effect.orDie))
