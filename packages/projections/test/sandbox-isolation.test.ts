import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { Sandbox } from "../src/runtime/sandbox.js"
import { SandboxScriptError } from "../src/runtime/sandboxErrors.js"
import { failureOf, probe, withSandbox } from "./sandboxSupport.js"

describe("the sandbox gives user code nothing of the host", () => {
  it("has no require, process, timers, console, module loader or host globals", async () => {
    const seen = await withSandbox("iso", (sb) =>
      probe(
        sb,
        `function probe() {
          return ["require", "process", "setTimeout", "setInterval", "setImmediate", "queueMicrotask", "console",
            "fetch", "module", "exports", "Buffer", "global", "std", "os", "WebAssembly"].map((k) => typeof globalThis[k])
        }`
      )
    )
    expect(seen).toEqual(Array(15).fill("undefined"))
  })

  it("refuses eval, indirect eval and every function constructor", async () => {
    const seen = await withSandbox("iso", (sb) =>
      probe(
        sb,
        `function attempt(f) { try { f(); return "ran" } catch (e) { return e.name } }
        function probe() {
          return [
            attempt(() => eval("1")),
            attempt(() => (0, eval)("1")),
            attempt(() => new Function("return 1")()),
            attempt(() => Function("return 1")()),
            attempt(() => (function () {}).constructor("return 1")()),
            attempt(() => (async function () {}).constructor("return 1")),
            attempt(() => (function* () {}).constructor("yield 1")),
            attempt(() => (async function* () {}).constructor("yield 1")),
            attempt(() => { "use strict"; Object.getPrototypeOf(function () {}).constructor = null })
          ]
        }`
      )
    )
    expect(seen).toEqual(Array(9).fill("EvalError").fill("TypeError", 8))
  })

  it("keeps (function(){}) instanceof Function true after the constructor is taken away", async () => {
    const seen = await withSandbox("iso", (sb) =>
      probe(sb, `function probe() { return (() => 1) instanceof Function }`)
    )
    expect(seen).toBe(true)
  })

  it("a script that tries to reach the host through globalThis, this or prototypes finds only the sandbox", async () => {
    const seen = await withSandbox("iso", (sb) =>
      probe(
        sb,
        `function probe() {
          const g = (function () { return this })() ?? globalThis
          const viaProto = Object.getPrototypeOf(Object.getPrototypeOf(g))
          return [typeof g.process, typeof globalThis.constructor.constructor, viaProto === null || typeof viaProto.process]
        }`
      )
    )
    expect(seen).toEqual(["undefined", "function", true])
  })

  it("prototype pollution stays inside the sandbox that did it", async () => {
    await withSandbox("polluter", (sb) =>
      probe(
        sb,
        `Object.prototype.polluted = "yes"; Array.prototype.push = null; function probe() { return ({}).polluted }`
      )
    ).then((seen) => expect(seen).toBe("yes"))
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    const other = await withSandbox("clean", (sb) => probe(sb, `function probe() { return typeof ({}).polluted }`))
    expect(other).toBe("undefined")
  })

  it("one projection cannot see another's globals, even while both are alive", async () => {
    const seen = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const a = yield* Sandbox.make("a")
          const b = yield* Sandbox.make("b")
          yield* a.compile(`var secret = 42; globalThis.shared = "a"`)
          return yield* probe(b, `function probe() { return [typeof secret, typeof shared] }`)
        })
      )
    )
    expect(seen).toEqual(["undefined", "undefined"])
  })

  it("dynamic import loads nothing: there is no module loader and no job queue runs", async () => {
    const seen = await withSandbox("iso", (sb) =>
      probe(
        sb,
        `let outcome = "pending"
        import("node:fs").then(() => { outcome = "loaded" }, () => { outcome = "refused" })
        function probe() { return outcome }`
      )
    )
    expect(seen).toBe("pending")
  })

  it("a syntax error is a script error, not a crash", async () => {
    const failure = await withSandbox("iso", (sb) => failureOf(sb.compile(`fromAll(;`)).pipe(Effect.orDie))
    expect(failure).toBeInstanceOf(SandboxScriptError)
    expect((failure as SandboxScriptError).errorName).toBe("SyntaxError")
  })
})
