import { describe, expect, it } from "vitest"
import { ackAllOf } from "../src/httpPlan.js"
import { residentBytes } from "../src/procStat.js"
import { parkedLinksBody, parkedStreamOf } from "../src/subscriptionsHttp.js"
import { mibPerGroup } from "../src/subscriptionsMemory.js"

const link = (relation: string, uri: string) =>
  `    {\n      "uri": "${uri}",\n      "relation": "${relation}",\n      "type": null\n    }`

/** The head of a JSON competing feed as the node writes it (pretty-printed, two spaces). */
const feed = (links: ReadonlyArray<string>, entryLinks: ReadonlyArray<string> = []) =>
  `{\n  "title": "Messages for 's/g'",\n  "links": [\n${links.join(",\n")}\n  ],\n  "entries": [\n` +
  `    {\n      "links": [\n${entryLinks.join(",\n")}\n      ]\n    }\n  ]\n}`

const base = "http://127.0.0.1:2113/subscriptions/bench-read-0/bench-consumers"
const a = "abcd0123-0000-4000-8000-000000000001"
const b = "abcd0123-0000-4000-8000-000000000002"

describe("bench:subscriptions helpers", () => {
  it("takes the ackAll link's path and id count from a competing feed, not an entry's ack link", () => {
    const text = feed(
      [
        link("ackAll", `${base}/ack?ids=${a},${b}`),
        link("nackAll", `${base}/nack?ids=${a},${b}`),
        link("previous", `${base}/20`),
        link("self", base)
      ],
      [link("ack", `${base}/ack/${b}`), link("nack", `${base}/nack/${b}`)]
    )
    expect(ackAllOf(text)).toEqual({ path: `/subscriptions/bench-read-0/bench-consumers/ack?ids=${a},${b}`, ids: 2 })
  })

  it("finds nothing to ack in an empty feed", () => {
    expect(ackAllOf(feed([link("previous", `${base}/20`), link("self", base)]))).toBeUndefined()
  })

  it("builds parked links as JSON appends with distinct ids, pointing into the target stream", () => {
    const body = JSON.parse(parkedLinksBody("abcd1234", 998, 4, "src", 1000)) as Array<{
      eventId: string
      eventType: string
      data: string
      metadata: { subscriptionEventNumber: number }
    }>
    expect(body.map((e) => e.data)).toEqual(["998@src", "999@src", "0@src", "1@src"])
    expect(body.every((e) => e.eventType === "$>")).toBe(true)
    expect(new Set(body.map((e) => e.eventId)).size).toBe(4)
    expect(body.map((e) => e.metadata.subscriptionEventNumber)).toEqual([998, 999, 0, 1])
    expect(parkedStreamOf("src", "g")).toBe("$persistentsubscription-src::g-parked")
  })

  it("turns two memory samples into MiB per group", () => {
    expect(mibPerGroup(100 * 1024 * 1024, 150 * 1024 * 1024, 1000)).toBe(0.05)
    expect(mibPerGroup(0, 3 * 1024 * 1024, 2)).toBe(1.5)
  })

  it("reads a process's resident set size from /proc", () => {
    expect(residentBytes(process.pid)).toBeGreaterThan(1024 * 1024)
    expect(residentBytes(undefined)).toBeUndefined()
  })
})
