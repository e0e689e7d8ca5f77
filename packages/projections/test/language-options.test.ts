import { Effect, Either } from "effect"
import { describe, expect, it } from "vitest"
import { compileProjection } from "../src/language/compileProjection.js"
import { Sandbox } from "../src/runtime/sandbox.js"
import { batchOf } from "./sandboxSupport.js"
import { definitionOf, definitionWith, faultOf } from "./languageSupport.js"

describe("options", () => {
  it("sets each option; later calls overwrite single keys; names match ignoring case", async () => {
    const source = `options({resultStreamName: 'r', $includeLinks: true, REORDEREVENTS: true, processingLag: 99.9})
      options({biState: true, processinglag: 120})
      fromStreams('a', 'b')`
    expect(await definitionOf(source)).toEqual(
      definitionWith(
        { streams: ["a", "b"] },
        { resultStreamName: "r", includeLinks: true, reorderEvents: true, processingLag: 120, isBiState: true }
      )
    )
  })

  it("a processing lag is truncated to an integer", async () => {
    expect((await definitionOf("options({processingLag: 99.9})")).options.processingLag).toBe(99)
    expect((await definitionOf("options({processingLag: -5.5})")).options.processingLag).toBe(-5)
  })

  it("an unknown option or one the old runtime took is refused by name", async () => {
    expect((await faultOf("options({foo: 1})")).message).toBe("Unrecognized option: foo")
    expect((await faultOf("options({partitionResultStreamNamePattern: 'x'})")).message).toBe(
      "Unrecognized option: partitionResultStreamNamePattern"
    )
  })

  it("a value of the wrong type is refused", async () => {
    for (const bad of [
      "{$includeLinks: 'yes'}",
      "{reorderEvents: 1}",
      "{processingLag: '50'}",
      "{resultStreamName: 5}",
      "{biState: null}"
    ])
      expect((await faultOf(`options(${bad})`)).message).toBe("Invalid value")
  })

  it("options returns nothing; a non-object argument sets nothing", async () => {
    expect(await definitionOf("if (options({}) !== undefined) throw 'returned'; options(5); fromAll()")).toEqual(
      definitionWith({ allStreams: true })
    )
  })
})

describe("compile faults", () => {
  it("a throw at top level faults with the thrown value as the message", async () => {
    expect((await faultOf("throw 123")).message).toBe("123")
    expect((await faultOf("throw new Error('x')")).message).toBe("x")
  })

  it("a syntax error faults", async () => {
    const fault = await faultOf("fromAll(;")
    expect(fault.message).toBe("unexpected token in expression: ';'")
    expect(fault.stack).toContain("p.js:1:9")
  })

  it("a definition error stays the fault even when the script catches it", async () => {
    expect((await faultOf("try { fromStream(1) } catch (e) {} fromAll()")).message).toBe("stream")
  })

  it("a script that runs past the compile budget faults with the compile timeout", async () => {
    const fault = await faultOf("fromAll(); while (true) {}", { compileBudget: 5 })
    expect(fault.message).toMatch(/^Projection script took too long to compile/)
  })

  it("a script that replaces built-ins does not change its recorded definition", async () => {
    const source =
      "Array.prototype.push = function () { throw 'push' }; Object.keys = null; fromStreams(['a']).when({A: function () {}})"
    expect(await definitionOf(source)).toEqual(
      definitionWith({ streams: ["a"], allEvents: false, events: ["A"] }, { definesFold: true })
    )
  })
})

describe("the end of the definition", () => {
  const afterDefinition = (source: string, probe: string) =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const sandbox = yield* Sandbox.make("p")
          const compiled = yield* Effect.either(compileProjection(sandbox, source))
          if (Either.isLeft(compiled)) return yield* Effect.die(compiled.left)
          yield* sandbox.compile(`function probe() { ${probe} }`)
          return (JSON.parse(yield* sandbox.runBatch("probe", batchOf([null]))) as Array<unknown>)[0]
        })
      )
    )

  it("removes the definition functions and empties the builder; log stays", async () => {
    const seen = await afterDefinition(
      "var b = fromAll()",
      `return [typeof fromAll, typeof options, typeof on_any, typeof fromCategories, typeof log,
        Object.getOwnPropertyNames(b).length]`
    )
    expect(seen).toEqual(["undefined", "undefined", "undefined", "undefined", "function", 0])
  })

  it("keeps the handlers by name for the execution phase", async () => {
    const source = `fromAll().partitionBy(function (e) { return 'p' })
      .when({$init: function () { return {n: 0} }, $created: function () {}, A: function (s) { return 'a' }, $any: function () { return 'any' }})
      .transformBy(function (s) { return 't' }).filterBy(function () { return true })`
    const seen = await afterDefinition(
      source,
      `const r = __projectionRecorded()
      return [r.init().n, r.created.length, r.byType.A(), r.any(), r.partitionBy(), r.transforms.map(t => t.kind),
        r.transforms[0].fn(), Object.isFrozen(r), typeof r.initShared, typeof r.deleted]`
    )
    expect(seen).toEqual([0, 1, "a", "any", "p", ["transform", "filter"], "t", true, "undefined", "undefined"])
  })
})
