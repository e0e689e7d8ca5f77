import { describe, expect, it } from "vitest"
import { categoryStream, commitOf, eventsBehind } from "../src/projectionsHttp.js"

describe("bench:projections helpers", () => {
  it("takes the commit part of a $all position's text, and nothing from another position", () => {
    expect(commitOf("C:6991/P:6991")).toBe(6991)
    expect(commitOf("C:0/P:-1")).toBe(0)
    expect(commitOf("$ce-account: 3")).toBeUndefined()
    expect(commitOf("")).toBeUndefined()
  })

  it("turns the bytes between a position and the committed end into events, never fewer than none", () => {
    expect(eventsBehind(10_600, 600, 500)).toBe(20)
    expect(eventsBehind(600, 900, 500)).toBe(0)
    expect(eventsBehind(1_000, undefined, 250)).toBe(4)
  })

  it("names prefill streams so that the first dash splits them into the categories", () => {
    expect([0, 1, 2, 3, 4, 5].map((k) => categoryStream(k, 4))).toEqual([
      "cat0-0",
      "cat1-1",
      "cat2-2",
      "cat3-3",
      "cat0-4",
      "cat1-5"
    ])
  })
})
