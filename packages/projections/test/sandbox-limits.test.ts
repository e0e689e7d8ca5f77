import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { Sandbox, sandboxHeapBytes } from "../src/runtime/sandbox.js"
import { SandboxBroken, SandboxOutOfMemory, SandboxScriptError, SandboxTimeout } from "../src/runtime/sandboxErrors.js"
import { batchOf, failureOf, probe, withSandbox } from "./sandboxSupport.js"

describe("the sandbox's limits", () => {
  it("stops an infinite loop at top level with a compile timeout", async () => {
    const failure = await withSandbox("loop", (sb) => failureOf(sb.compile(`for (;;) {}`)).pipe(Effect.orDie), {
      compileBudget: 5
    })
    expect(failure).toBeInstanceOf(SandboxTimeout)
    expect((failure as SandboxTimeout).phase).toBe("compile")
  })

  it("stops an infinite loop in a handler with an execution timeout, and a try/catch cannot swallow it", async () => {
    const failure = await withSandbox(
      "loop",
      (sb) =>
        Effect.gen(function* () {
          yield* sb.compile(`function handle() { for (;;) { try { for (;;) {} } catch (e) {} } }`)
          return yield* failureOf(sb.runBatch("handle", batchOf([1, 2])))
        }).pipe(Effect.orDie),
      { executionBudget: 5 }
    )
    expect(failure).toBeInstanceOf(SandboxTimeout)
    expect(failure).toMatchObject({ phase: "execute", item: 0 })
  })

  it("stops the same script at the same point twice (the budget is counted, not timed)", async () => {
    const stopAt = () =>
      withSandbox(
        "count",
        (sb) =>
          Effect.gen(function* () {
            yield* sb.compile(`var i = 0; function spin() { for (;;) i++ } function probe() { return i }`)
            yield* failureOf(sb.runBatch("spin", batchOf([null]))).pipe(Effect.orDie)
            return yield* sb.runBatch("probe", batchOf([null]))
          }),
        { executionBudget: 7 }
      )
    const first = await stopAt()
    expect(JSON.parse(first)[0]).toBeGreaterThan(0)
    expect(await stopAt()).toBe(first)
  })

  it("gives each item of a batch its own full budget", async () => {
    // Each item spins for about two thirds of the budget; over one shared budget the second item would be stopped.
    const results = await withSandbox(
      "budget",
      (sb) =>
        Effect.gen(function* () {
          yield* sb.compile(`function half(n) { let x = 0; for (let i = 0; i < n; i++) x++; return x }`)
          return yield* sb.runBatch("half", batchOf([20_000, 20_000, 20_000]))
        }),
      { executionBudget: 6 }
    )
    expect(JSON.parse(results)).toEqual([20_000, 20_000, 20_000])
    const overOne = await withSandbox(
      "budget",
      (sb) =>
        Effect.gen(function* () {
          yield* sb.compile(`function half(n) { let x = 0; for (let i = 0; i < n; i++) x++; return x }`)
          return yield* failureOf(sb.runBatch("half", batchOf([60_000])))
        }).pipe(Effect.orDie),
      { executionBudget: 6 }
    )
    expect(overOne).toBeInstanceOf(SandboxTimeout)
  })

  it("turns deep recursion into a stack error the host survives", async () => {
    const failure = await withSandbox("deep", (sb) =>
      failureOf(probe(sb, `function f(n) { return f(n + 1) + 1 } function probe() { return f(0) }`)).pipe(Effect.orDie)
    )
    expect(failure).toBeInstanceOf(SandboxScriptError)
    expect(failure).toMatchObject({ errorName: "InternalError", message: "stack overflow" })
    // The stack is cut to its innermost frames rather than thousands of lines.
    expect((failure as SandboxScriptError).stack.split("\n").length).toBeLessThanOrEqual(21)
  })

  it("turns a huge allocation into an out-of-memory error; the sandbox and the host go on", async () => {
    const [failure, after] = await withSandbox(
      "hungry",
      (sb) =>
        Effect.gen(function* () {
          yield* sb.compile(
            `function grab() { return "x".repeat(64 * 1024 * 1024).length } function probe() { return 1 + 1 }`
          )
          const failure = yield* failureOf(sb.runBatch("grab", batchOf([null]))).pipe(Effect.orDie)
          const after = yield* sb.runBatch("probe", batchOf([null]))
          return [failure, after] as const
        }),
      { memoryBytes: 8 * 1024 * 1024 }
    )
    expect(failure).toBeInstanceOf(SandboxOutOfMemory)
    expect(after).toBe("[2]")
  })

  it("a batch larger than the memory limit is an out-of-memory error, not a crash", async () => {
    const [failure, after] = await withSandbox(
      "small",
      (sb) =>
        Effect.gen(function* () {
          yield* sb.compile(`function size(x) { return x.length }`)
          const huge = { items: JSON.stringify(["y".repeat(2 * 1024 * 1024)]), now: [0], seed: [0] }
          const failure = yield* failureOf(sb.runBatch("size", huge)).pipe(Effect.orDie)
          return [failure, yield* sb.runBatch("size", batchOf(["abc"]))] as const
        }),
      { memoryBytes: 1024 * 1024 }
    )
    expect(failure).toBeInstanceOf(SandboxOutOfMemory)
    expect(after).toBe("[3]")
  })

  it("a nesting that exhausts the host's stack inside the interpreter breaks only that sandbox", async () => {
    const outcome = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const bystander = yield* Sandbox.make("bystander")
          yield* bystander.compile(`var n = 0; function probe() { return ++n }`)
          const victim = yield* Sandbox.make("victim")
          yield* victim.compile(`function nest() { return JSON.parse("[".repeat(300000) + "]".repeat(300000)) }`)
          const failure = yield* failureOf(victim.runBatch("nest", batchOf([null]))).pipe(Effect.orDie)
          const reuse = yield* Effect.exit(victim.compile("1"))
          const fresh = yield* Sandbox.make("fresh")
          const freshSays = yield* probe(fresh, `function probe() { return [1, 2, 3].map((x) => x * 2) }`)
          const bystanderSays = yield* bystander.runBatch("probe", batchOf([null, null]))
          return { failure, reuseDies: reuse._tag === "Failure", freshSays, bystanderSays }
        })
      )
    )
    expect(outcome.failure).toBeInstanceOf(SandboxBroken)
    expect(outcome.reuseDies).toBe(true)
    expect(outcome.freshSays).toEqual([2, 4, 6])
    expect(outcome.bystanderSays).toBe("[1,2]")
  })

  it("reports what QuickJS holds for the projection, which grows with what the script keeps", async () => {
    const [empty, full] = await withSandbox("sized", (sb) =>
      Effect.gen(function* () {
        const empty = yield* sb.memoryUsedBytes()
        yield* sb.compile(`var kept = []; for (let i = 0; i < 20000; i++) kept.push({ i, s: "v" + i })`)
        return [empty, yield* sb.memoryUsedBytes()] as const
      })
    )
    expect(empty).toBeGreaterThan(0)
    expect(full - empty).toBeGreaterThan(20000 * 16)
  })

  it("frees everything on disposal: many sandboxes created and disposed do not grow the shared heap", async () => {
    const cycle = (rounds: number) =>
      Effect.runPromise(
        Effect.forEach(
          Array.from({ length: rounds }, (_, i) => i),
          (i) =>
            Effect.scoped(
              Effect.flatMap(Sandbox.make(`p${i}`), (sb) =>
                sb.compile(`var big = []; for (let i = 0; i < 20000; i++) big.push({ i, s: "v" + i })`)
              )
            ),
          { discard: true }
        )
      )
    await cycle(20)
    const before = await Effect.runPromise(sandboxHeapBytes)
    // Each sandbox holds about 1 MB; 200 leaked ones would need 200 MB more.
    await cycle(200)
    const after = await Effect.runPromise(sandboxHeapBytes)
    expect(after - before).toBeLessThan(16 * 1024 * 1024)
  })

  it("refuses use after disposal as a defect", async () => {
    const sandbox = await Effect.runPromise(Effect.scoped(Sandbox.make("gone")))
    await expect(Effect.runPromise(sandbox.compile("1"))).rejects.toThrow(/disposed/)
  })
})
