import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { validateSourceDefinition } from "../src/language/validateSourceDefinition.js"
import { definitionOf, definitionWith } from "./languageSupport.js"

const problemOf = async (source: string): Promise<string | undefined> => {
  const checked = validateSourceDefinition(await definitionOf(source))
  return Either.isLeft(checked) ? checked.left.message : undefined
}

const any = "{$any: function (s) { return s }}"

describe("start-time validation", () => {
  it("accepts the usual shapes", async () => {
    for (const source of [
      `fromAll().when(${any})`,
      `fromAll()`,
      `fromCategory('c').foreachStream().when({A: function () {}, $deleted: function () {}})`,
      `fromStreams('a', 'b').when(${any})`,
      `options({reorderEvents: true, processingLag: 50}); fromStreams('a', 'b').when(${any})`
    ])
      expect(await problemOf(source)).toBeUndefined()
  })

  const cases: ReadonlyArray<readonly [string, string]> = [
    ["", "None of streams and categories are included"],
    [`fromCategory()`, "None of streams and categories are included"],
    ["fromStream('a'); fromCategory('b')", "Streams and categories cannot be included in a filter at the same time"],
    ["fromAll(); fromStream('a')", "Both FromAll and specific categories/streams cannot be set"],
    ["fromAll(); fromCategory('c')", "Both FromAll and specific categories/streams cannot be set"],
    [
      "fromAll().when({A: function () {}, $any: function () {}})",
      "Both AllEvents and specific event filters cannot be set"
    ],
    [
      "fromCategory('a', 'b').foreachStream().when({})",
      "foreachStream projections are not supported on stream based sources"
    ],
    [`options({reorderEvents: true}); fromAll().when(${any})`, "Event reordering cannot be used with fromAll()"],
    [
      `options({reorderEvents: true, processingLag: 100}); fromStream('a').when(${any})`,
      "Event reordering is only available in fromStreams([]) projections"
    ],
    [
      `options({reorderEvents: true, processingLag: 49}); fromStreams('a', 'b').when(${any})`,
      "Event reordering requires processing lag at least of 50ms"
    ],
    [
      `fromAll().when({$deleted: function () {}})`,
      "Deleted stream notifications are only supported with foreachStream()"
    ]
  ]
  for (const [source, message] of cases)
    it(`${source || "an empty source"} → ${message}`, async () => {
      expect(await problemOf(source)).toBe(message)
    })

  // No script reaches this (a typed handler always names its type), but a stored definition can.
  it("a definition with no event type and not all events is refused", () => {
    const checked = validateSourceDefinition(definitionWith({ allStreams: true, allEvents: false }))
    expect(Either.isLeft(checked) && checked.left.message).toBe("None of events are included")
  })
})
