import { describe, expect, it } from "vitest"
import { Cause, Effect, Exit } from "effect"
import { AssertionFailed, assert, isAssertionFailed, setAssertionFailedHandler, unreachable } from "../src/assert.js"

describe("assert", () => {
  it("passes silently when the condition holds", () => {
    expect(() => assert(1 + 1 === 2, "arithmetic holds")).not.toThrow()
  })

  it("throws AssertionFailed with its message when the condition does not hold", () => {
    let thrown: unknown
    try {
      assert(false as boolean, "positions only grow")
    } catch (e) {
      thrown = e
    }
    expect(thrown).toBeInstanceOf(AssertionFailed)
    expect(thrown).toBeInstanceOf(Error)
    expect((thrown as Error).message).toBe("positions only grow")
    expect((thrown as Error).name).toBe("AssertionFailed")
    expect(isAssertionFailed(thrown)).toBe(true)
    expect(isAssertionFailed(new Error("positions only grow"))).toBe(false)
  })

  it("narrows the type it asserts", () => {
    const value: string | undefined = "x" as string | undefined
    assert(value !== undefined, "value is set")
    expect(value.length).toBe(1)
  })

  it("is a defect inside an Effect, not an expected failure", () => {
    const exit = Effect.runSyncExit(Effect.sync(() => assert(false as boolean, "one round at a time")))
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isFailure(exit)) {
      expect(Cause.failureOption(exit.cause)._tag).toBe("None")
      const defect = Cause.squash(exit.cause)
      expect(isAssertionFailed(defect)).toBe(true)
      expect((defect as Error).message).toBe("one round at a time")
    }
  })
})

describe("unreachable", () => {
  type Shape = { readonly kind: "a" } | { readonly kind: "b" }
  const name = (shape: Shape): string => {
    switch (shape.kind) {
      case "a":
        return "A"
      case "b":
        return "B"
      default:
        return unreachable(shape)
    }
  }

  it("is never reached for the cases the types allow", () => {
    expect(name({ kind: "a" })).toBe("A")
    expect(name({ kind: "b" })).toBe("B")
  })

  it("throws AssertionFailed naming the value when reached anyway", () => {
    expect(() => name({ kind: "c" } as unknown as Shape)).toThrow(AssertionFailed)
    expect(() => name({ kind: "c" } as unknown as Shape)).toThrow(/unreachable/)
  })
})

describe("the assertion-failed handler", () => {
  it("is told of a failed assertion before it is thrown, and of nothing else", () => {
    const seen: Array<string> = []
    const previous = setAssertionFailedHandler((error) => seen.push(error.message))
    try {
      assert(true, "holds")
      expect(seen).toEqual([])
      expect(() => assert(false as boolean, "the checkpoint is never ahead of synced data")).toThrow(AssertionFailed)
      expect(seen).toEqual(["the checkpoint is never ahead of synced data"])
    } finally {
      setAssertionFailedHandler(previous)
    }
    expect(() => assert(false as boolean, "after")).toThrow(AssertionFailed)
    expect(seen).toHaveLength(1)
  })
})
