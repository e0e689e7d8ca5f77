/**
 * XML append bodies converted to the JSON form: repeated element names become arrays, in order, and the
 * conversion takes time in proportion to the body (it once copied the array for every repeat, so 130,000
 * repeated elements in a 1 MiB body took minutes).
 */
import { describe, it, assert } from "@effect/vitest"
import { stringifyIndented } from "../src/lenientJson.js"
import { xmlEventsToJson } from "../src/streams/xmlEvents.js"

describe("xmlEventsToJson", () => {
  it("repeated names become one array, in document order", () => {
    const json = xmlEventsToJson("<Events><e><data><a>1</a><b>x</b><a>2</a><a>3</a></data></e></Events>")
    assert.strictEqual(
      stringifyIndented(json!),
      stringifyIndented({
        kind: "array",
        items: [
          {
            kind: "object",
            members: [
              [
                "data",
                {
                  kind: "object",
                  members: [
                    [
                      "a",
                      {
                        kind: "array",
                        items: [
                          { kind: "string", value: "1" },
                          { kind: "string", value: "2" },
                          { kind: "string", value: "3" }
                        ]
                      }
                    ],
                    ["b", { kind: "string", value: "x" }]
                  ]
                }
              ]
            ]
          }
        ]
      })
    )
  })

  // A complexity guard, not a speed test: the quadratic version took minutes for this input, the linear one
  // a fraction of a second, so the bound is far from both.
  it("converts 100,000 repeated elements in linear time (far under 10 s; the quadratic version took minutes)", () => {
    const start = performance.now()
    const json = xmlEventsToJson(`<Events><e><data>${"<a>1</a>".repeat(100_000)}</data></e></Events>`)
    const elapsed = performance.now() - start
    assert.strictEqual(json?.kind, "array")
    assert.isBelow(elapsed, 10_000)
  })
})
