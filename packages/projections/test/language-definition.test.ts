import { describe, expect, it } from "vitest"
import { definitionOf, definitionWith, emptyDefinition, faultOf } from "./languageSupport.js"

describe("selectors", () => {
  it("an empty source compiles to a definition with no selector", async () => {
    expect(await definitionOf("")).toEqual(emptyDefinition)
  })

  it("fromAll reads all streams", async () => {
    expect(await definitionOf("fromAll()")).toEqual(definitionWith({ allStreams: true }))
  })

  it("fromStream reads one stream; a non-string is refused", async () => {
    expect(await definitionOf("fromStream('orders')")).toEqual(definitionWith({ streams: ["orders"] }))
    expect((await faultOf("fromStream(1)")).message).toBe("stream")
  })

  it("fromStreams takes the streams as arguments or as one array; every one must be a string", async () => {
    expect(await definitionOf("fromStreams('a', 'b')")).toEqual(definitionWith({ streams: ["a", "b"] }))
    expect(await definitionOf("fromStreams(['a', 'b'])")).toEqual(definitionWith({ streams: ["a", "b"] }))
    expect((await faultOf("fromStreams(['a', 2])")).message).toBe("streams")
  })

  it("one category is a category; several are the streams of their categories", async () => {
    expect(await definitionOf("fromCategory('c')")).toEqual(definitionWith({ categories: ["c"] }))
    expect(await definitionOf("fromCategory('a', 'b')")).toEqual(definitionWith({ streams: ["$ce-a", "$ce-b"] }))
    expect(await definitionOf("fromCategories(['a', 'b'])")).toEqual(definitionWith({ streams: ["$ce-a", "$ce-b"] }))
    // An array, even of one, is read as several categories.
    expect(await definitionOf("fromCategory(['a'])")).toEqual(definitionWith({ streams: ["$ce-a"] }))
    expect((await faultOf("fromCategory(1)")).message).toBe("category")
    expect((await faultOf("fromCategory('a', 1)")).message).toBe("categories")
  })

  it("fromCategory() with no argument changes nothing and returns the builder as it was", async () => {
    expect(await definitionOf("fromCategory()")).toEqual(emptyDefinition)
    expect((await faultOf("fromCategory().when({})")).message).toContain("not a function")
  })

  it("selectors accumulate into one definition", async () => {
    expect(await definitionOf("fromStream('a'); fromCategory('b'); fromAll()")).toEqual(
      definitionWith({ streams: ["a"], categories: ["b"], allStreams: true })
    )
  })

  it("fromStreamsMatching and the emitting functions are not defined during the definition", async () => {
    for (const call of [
      "fromStreamsMatching(function () { return true })",
      "emit('s', 'T', {})",
      "linkTo('s', {})",
      "linkStreamTo('s', 't')",
      "copyTo('s', {})"
    ]) {
      const fault = await faultOf(call)
      expect(fault.message).toMatch(/is not defined/)
      expect(fault.stack).toContain("p.js")
    }
  })

  it("log is available and does nothing", async () => {
    expect(await definitionOf("log('hello', {a: 1}); fromAll()")).toEqual(definitionWith({ allStreams: true }))
  })
})

describe("partitioning", () => {
  it("foreachStream partitions by stream", async () => {
    expect(await definitionOf("fromAll().foreachStream().when({$any: function (s) { return s }})")).toEqual(
      definitionWith({ allStreams: true, byStream: true }, { definesFold: true })
    )
  })

  it("partitionBy takes a function", async () => {
    expect(
      await definitionOf("fromCategory('c').partitionBy(function (e) { return e.streamId }).when({A: function () {}})")
    ).toEqual(
      definitionWith(
        { categories: ["c"], byCustomPartitions: true, allEvents: false, events: ["A"] },
        { definesFold: true }
      )
    )
    expect((await faultOf("fromAll().partitionBy('x')")).message).toBe("partitionBy")
  })
})
