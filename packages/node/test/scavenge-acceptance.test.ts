// Black-box scavenge acceptance, part 1: what a scavenge removes and keeps, seen only through HTTP (stream
// reads, `$all`, the history streams, the log lines the reference also prints). The rules are the
// reference server's, as docs/scavenging.md states them. Chunks are 128 KiB and a "big" event is
// ~40 KB, so three big events fill a chunk and scenarios cross chunk boundaries with a handful of events.
import { describe, expect, it } from "vitest"
import { Prng } from "@vellum/platform"
import {
  BIG,
  Client,
  Ids,
  SMALL_NODE,
  dataNumbers,
  freshNode,
  openNode,
  trackNodes
} from "./scavengeAcceptanceSupport.js"

const track = trackNodes()
/** A fresh node whose closing and log check come after the test. */
const fresh = async (scenario: number, argv?: ReadonlyArray<string>) => {
  const made = await freshNode(scenario, argv)
  track(made.node)
  return made
}

const HOUR = 3_600_000

describe("$maxCount, $maxAge, $tb", () => {
  it("$maxCount N keeps the last N in reads and in $all after a scavenge, without renumbering", async () => {
    const { c } = await fresh(1)
    await c.appendEach("mc", 8, BIG) // chunks 0..2
    await c.appendEach("solo", 1)
    expect((await c.setMetadata("mc", { $maxCount: 3 })).status).toBe(201)
    expect((await c.setMetadata("solo", { $maxCount: 1 })).status).toBe(201)
    // Before: reads already hide the removed events; $all still has them.
    expect(await c.numbers("mc")).toEqual([5, 6, 7])
    expect(await c.allNumbers("mc")).toEqual([0, 1, 2, 3, 4, 5, 6, 7])

    await c.scavenge("threshold=0")

    const mc = await c.read("mc")
    expect(mc.events.map((e) => e.eventNumber)).toEqual([5, 6, 7])
    expect(dataNumbers(mc.events)).toEqual([5, 6, 7])
    expect(await c.allNumbers("mc")).toEqual([5, 6, 7])
    expect((await c.readEvent("mc", 0)).status).toBe(404)
    expect((await c.readEvent("mc", 5)).status).toBe(200)
    // Keep-last-event: a stream's last event is never removed.
    expect(await c.numbers("solo")).toEqual([0])
    expect(await c.allNumbers("solo")).toEqual([0])
    // Relaxing the limit later brings nothing back: the removed events are gone.
    expect((await c.setMetadata("mc", { $maxCount: 100 })).status).toBe(201)
    expect(await c.numbers("mc")).toEqual([5, 6, 7])
    // Appending continues the numbering.
    expect((await c.append("mc", 1)).headers["Location"]).toMatch(/\/streams\/mc\/8$/)
  })

  it("$maxAge removes events older than EffectiveNow - maxAge and keeps younger ones and the last event", async () => {
    const { c, clock } = await fresh(2)
    await c.appendEach("aged", 3, BIG) // old, a chunk of their own
    await c.appendEach("aged", 1) // old, in the chunk that gets the young ones too (a mixed chunk)
    await c.appendEach("allOld", 2)
    clock.advance(2 * HOUR)
    await c.appendEach("aged", 2) // young
    await c.appendEach("young", 2)
    for (const s of ["aged", "allOld", "young"]) expect((await c.setMetadata(s, { $maxAge: 3600 })).status).toBe(201)
    expect(await c.numbers("aged")).toEqual([4, 5])
    expect(await c.allNumbers("aged")).toEqual([0, 1, 2, 3, 4, 5])

    await c.scavenge()

    expect(await c.numbers("aged")).toEqual([4, 5])
    expect(await c.allNumbers("aged")).toEqual([4, 5])
    expect(await c.numbers("young")).toEqual([0, 1])
    expect(await c.allNumbers("young")).toEqual([0, 1])
    // Every event of allOld is expired, but the keep-last-event rule keeps the last one in the log.
    expect(await c.numbers("allOld")).toEqual([])
    expect(await c.allNumbers("allOld")).toEqual([1])
    // Relaxing the limit later brings nothing back (maybe-expired entries may stay in the index, but
    // reads skip entries whose record is gone).
    expect((await c.setMetadata("aged", {})).status).toBe(201)
    expect(await c.numbers("aged")).toEqual([4, 5])
    for (const n of [0, 3]) expect((await c.readEvent("aged", n)).status).toBe(404)
  })

  it("$tb removes the events below it; a $tb past the end keeps only the last event", async () => {
    const { c } = await fresh(3)
    await c.appendEach("tb", 7, BIG)
    await c.appendEach("tbAll", 3)
    expect((await c.setMetadata("tb", { $tb: 4 })).status).toBe(201)
    expect((await c.setMetadata("tbAll", { $tb: 10 })).status).toBe(201)
    expect(await c.numbers("tb")).toEqual([4, 5, 6])

    await c.scavenge()

    expect(await c.numbers("tb")).toEqual([4, 5, 6])
    expect(await c.allNumbers("tb")).toEqual([4, 5, 6])
    // A truncated stream still exists: 200 with no entries.
    expect(await c.read("tbAll")).toEqual({ status: 200, events: [] })
    expect(await c.allNumbers("tbAll")).toEqual([2])
  })

  it("several limits at once: the largest prefix goes", async () => {
    const { c } = await fresh(4)
    await c.appendEach("both", 6, BIG)
    expect((await c.setMetadata("both", { $maxCount: 4, $tb: 3 })).status).toBe(201)
    await c.scavenge()
    expect(await c.numbers("both")).toEqual([3, 4, 5])
    expect(await c.allNumbers("both")).toEqual([3, 4, 5])
  })
})

describe("deleted streams", () => {
  it("soft delete: 404 before and after, $all keeps only the last event, the stream can be recreated", async () => {
    const { c } = await fresh(5)
    await c.appendEach("soft", 5, BIG)
    expect((await c.setMetadata("soft", { $maxCount: 50 })).status).toBe(201)
    expect((await c.delete("soft", false)).status).toBe(204)
    expect((await c.read("soft")).status).toBe(404)
    expect(await c.allNumbers("soft")).toEqual([0, 1, 2, 3, 4])

    await c.scavenge()

    expect((await c.read("soft")).status).toBe(404)
    // Soft delete: everything except the last event is discarded; of the metastream only the latest metadata
    // record survives.
    expect(await c.allNumbers("soft")).toEqual([4])
    expect(await c.allNumbers("$$soft")).toEqual([1])

    // Recreated: numbering continues, only the new events are visible.
    const recreated = await c.append("soft", 2, 0, -2)
    expect(recreated.status).toBe(201)
    expect(recreated.headers["Location"]).toMatch(/\/streams\/soft\/5$/)
    expect(await c.numbers("soft")).toEqual([5, 6])
    await c.scavenge()
    expect(await c.numbers("soft")).toEqual([5, 6])
    expect(await c.allNumbers("soft")).toEqual([5, 6])
    expect((await c.allNumbers("$$soft")).length).toBe(1)
  })

  it("hard delete: 410 before and after, only the tombstone stays in $all, appends are refused", async () => {
    const { c } = await fresh(6)
    await c.appendEach("hard", 5, BIG)
    expect((await c.setMetadata("hard", { $maxCount: 100 })).status).toBe(201)
    expect((await c.delete("hard", true)).status).toBe(204)
    expect((await c.read("hard")).status).toBe(410)

    await c.scavenge()

    expect((await c.read("hard")).status).toBe(410)
    expect((await c.readEvent("hard", 0)).status).toBe(410)
    const left = (await c.all()).filter((e) => e.streamId === "hard")
    expect(left).toHaveLength(1)
    expect(left[0]!.eventType).toBe("$streamDeleted")
    // The tombstone's number is long.MaxValue on the wire, exactly: checked in the feed's text.
    const feedText = await c.allText()
    expect(feedText).toContain(`"title": "9223372036854775807@hard"`)
    expect(feedText).toContain(`"eventNumber": 9223372036854775807,`)
    expect(feedText).not.toContain(String(Number.MAX_SAFE_INTEGER))
    // The metastream of a tombstoned stream goes whole.
    expect(await c.allNumbers("$$hard")).toEqual([])
    // Every append to a hard-deleted stream is 410, whatever the expected version.
    for (const expected of [undefined, -2, -1, 4, 100])
      expect((await c.append("hard", 1, 0, expected)).status).toBe(410)
    expect((await c.delete("hard", true)).status).toBe(410)
  })
})

describe("metadata streams", () => {
  it("only the latest $$stream record survives; an event of any type in $$s is the metadata", async () => {
    const { c } = await fresh(7)
    await c.appendEach("meta", 6, BIG)
    for (const maxCount of [100, 50, 20, 2])
      expect((await c.setMetadata("meta", { $maxCount: maxCount })).status).toBe(201)
    await c.appendEach("sneak", 4)
    expect((await c.setMetadata("sneak", { $maxCount: 1 })).status).toBe(201)
    // "An event of type 'sneaky' ... in $$x does count, and it clears the metadata".
    expect(
      (
        await c.node.call({
          method: "POST",
          url: "/streams/%24%24sneak",
          headers: { host: "h", authorization: c.auth, "content-type": "application/vnd.eventstore.events+json" },
          body: new TextEncoder().encode(
            JSON.stringify([{ eventId: c.ids.next(), eventType: "sneaky", data: { hello: 1 } }])
          )
        })
      ).status
    ).toBe(201)
    expect(await c.numbers("sneak")).toEqual([0, 1, 2, 3])

    await c.scavenge()

    expect(await c.allNumbers("$$meta")).toEqual([3])
    expect(await c.numbers("meta")).toEqual([4, 5])
    expect(await c.allNumbers("meta")).toEqual([4, 5])
    expect(await c.allNumbers("$$sneak")).toEqual([1])
    expect(await c.allNumbers("sneak")).toEqual([0, 1, 2, 3])
  })
})

describe("threshold", () => {
  it("a chunk runs only when its weight is above the threshold; skipped weights add up across runs; -1 runs every chunk", async () => {
    const { c, node } = await fresh(8)
    await c.appendEach("heavy", 3, BIG) // chunk 0: 3 removable -> weight 6
    await c.appendEach("light", 3, BIG) // chunk 1: 2 removable -> weight 4
    await c.appendEach("heavy", 1, BIG) // chunk 2
    await c.appendEach("light", 1, BIG)
    expect((await c.setMetadata("heavy", { $maxCount: 1 })).status).toBe(201)
    expect((await c.setMetadata("light", { $tb: 2 })).status).toBe(201)

    const first = await c.scavenge("threshold=4")
    expect(node.logs).toContain("Scavenging physical chunk 0-0 with weight 6. The threshold is 4")
    expect(node.logs).toContain("Skipped physical chunk 1-1 with weight 4. The threshold is 4")
    const executed = (await c.history(first)).filter((e) => e.eventType === "$scavengeChunksCompleted")
    expect(executed.map((e) => e.data)).toMatchObject([{ chunkStartNumber: 0, chunkEndNumber: 0 }])
    // The skipped chunk keeps its records in $all; reads hide them (index entries go whatever the threshold).
    expect(await c.allNumbers("heavy")).toEqual([3])
    expect(await c.allNumbers("light")).toEqual([0, 1, 2, 3])
    expect(await c.numbers("light")).toEqual([2, 3])
    expect((await c.readEvent("light", 0)).status).toBe(404)

    // threshold 0: the weight left on chunk 1 is still there and now runs; weight-0 chunks are not rewritten.
    const second = await c.scavenge("threshold=0")
    expect(await c.allNumbers("light")).toEqual([2, 3])
    const secondChunks = (await c.history(second)).filter((e) => e.eventType === "$scavengeChunksCompleted")
    expect(secondChunks.length).toBeGreaterThan(0)
    expect(node.logs.some((l) => /^Skipped physical chunk \d+-\d+ with weight 0\. The threshold is 0$/.test(l))).toBe(
      true
    )

    // threshold -1: every chunk before the point is rewritten, weight or not, in order and without gaps.
    const third = await c.scavenge("threshold=-1")
    const ranges = (await c.history(third))
      .filter((e) => e.eventType === "$scavengeChunksCompleted")
      .map((e) => e.data as { chunkStartNumber: number; chunkEndNumber: number })
    expect(ranges[0]!.chunkStartNumber).toBe(0)
    for (let i = 1; i < ranges.length; i++) expect(ranges[i]!.chunkStartNumber).toBe(ranges[i - 1]!.chunkEndNumber + 1)
    const completed = (await c.history(third)).find((e) => e.eventType === "$scavengeCompleted")!.data as {
      maxChunkScavenged: number
    }
    expect(completed.maxChunkScavenged).toBe(ranges[ranges.length - 1]!.chunkEndNumber)
    expect(await c.allNumbers("heavy")).toEqual([3])
    expect(await c.allNumbers("light")).toEqual([2, 3])
  })
})

describe("across runs and options", () => {
  it("limits accumulated by one run still apply in the next, after a restart too (each chunk is accumulated once)", async () => {
    const { c, disk, clock } = await freshNode(9)
    await c.appendEach("mc", 4, BIG)
    expect((await c.setMetadata("mc", { $maxCount: 2 })).status).toBe(201)
    await c.scavenge()
    expect(await c.allNumbers("mc")).toEqual([2, 3])
    await c.node.close()
    const node = track(await openNode(disk, clock))
    const again = new Client(node, new Ids(10))
    await again.appendEach("mc", 3, BIG)
    await again.scavenge()
    expect(await again.allNumbers("mc")).toEqual([5, 6])
    expect(await again.numbers("mc")).toEqual([5, 6])
    // A run with no new point (syncOnly) changes nothing.
    const notHistory = (all: ReadonlyArray<{ streamId: string }>) =>
      all.filter((e) => !/^(\$\$)?\$scavenges/.test(e.streamId))
    const before = notHistory(await again.all())
    await again.scavenge("syncOnly=true")
    expect(notHistory(await again.all())).toEqual(before)
  })

  it("threads=4 ends in the same state as threads=1 (threads parallelise chunk execution only)", async () => {
    const states = []
    for (const threads of [1, 4]) {
      const { c } = await fresh(11)
      for (let i = 0; i < 24; i++) await c.appendEach(`t${i % 4}`, 1, BIG)
      for (const [s, meta] of [
        ["t0", { $maxCount: 2 }],
        ["t1", { $tb: 3 }]
      ] as const)
        expect((await c.setMetadata(s, meta)).status).toBe(201)
      expect((await c.delete("t2", true)).status).toBe(204)
      await c.scavenge(`threads=${threads}`)
      states.push({
        reads: [await c.read("t0"), await c.read("t1"), await c.read("t3")],
        all: (await c.all()).filter((e) => /^(\$\$)?t\d$/.test(e.streamId))
      })
    }
    expect(states[1]).toEqual(states[0])
    expect(states[0]!.reads.map((r) => r.events.map((e) => e.eventNumber))).toEqual([
      [4, 5],
      [3, 4, 5],
      [0, 1, 2, 3, 4, 5]
    ])
  })

  it("UnsafeIgnoreHardDelete: every chunk runs whatever the threshold; tombstones and hard-deleted streams go whole", async () => {
    const { c } = await fresh(12, [...SMALL_NODE, "--unsafe-ignore-hard-delete"])
    await c.appendEach("hard", 4, BIG)
    await c.appendEach("kept", 2, BIG)
    expect((await c.setMetadata("hard", { $maxCount: 10 })).status).toBe(201)
    expect((await c.delete("hard", true)).status).toBe(204)
    const id = await c.scavenge("threshold=1000000")
    const ranges = (await c.history(id))
      .filter((e) => e.eventType === "$scavengeChunksCompleted")
      .map((e) => [
        (e.data as { chunkStartNumber: number }).chunkStartNumber,
        (e.data as { chunkEndNumber: number }).chunkEndNumber
      ])
    expect(ranges[0]).toEqual([0, 0])
    expect(ranges.length).toBeGreaterThanOrEqual(2)
    expect(await c.allNumbers("hard")).toEqual([])
    expect(await c.allNumbers("$$hard")).toEqual([])
    expect(await c.allNumbers("kept")).toEqual([0, 1])
  })

  it("DisableScavengeMerging: no merge happens and none is reported", async () => {
    const { c } = await fresh(13, [...SMALL_NODE, "--disable-scavenge-merging"])
    for (let i = 0; i < 2; i++) {
      await c.appendEach("p", 2, BIG)
      await c.appendEach("q", 1, BIG)
    }
    expect((await c.delete("p", true)).status).toBe(204)
    const id = await c.scavenge()
    const history = await c.history(id)
    expect(history.filter((e) => e.eventType === "$scavengeChunksCompleted")).toHaveLength(2)
    expect(history.filter((e) => e.eventType === "$scavengeMergeCompleted")).toEqual([])
    expect(await c.numbers("q")).toEqual([0, 1])
  })

  it("a chunk the scavenge empties: reads and $all stay right, before and after a restart", async () => {
    // Merging a group that holds an emptied chunk fails today (a $scavengeMergeCompleted with wasMerged false:
    // see the report), so this scenario only asserts the data; its node is left out of the log check.
    const { c, disk, clock, node } = await freshNode(14)
    await c.appendEach("a", 8, BIG) // chunk 1 holds a3..a5 only
    await c.appendEach("b", 4)
    expect((await c.setMetadata("a", { $maxCount: 1 })).status).toBe(201)
    const id = await c.scavenge("threshold=-1")
    for (const e of (await c.history(id)).filter((h) => h.eventType === "$scavengeMergeCompleted")) {
      expect(Object.keys(e.data as object)).toEqual([
        "scavengeId",
        "chunkStartNumber",
        "chunkEndNumber",
        "timeTaken",
        "spaceSaved",
        "wasMerged",
        "nodeEndpoint",
        "errorMessage"
      ])
    }
    const expectRight = async (client: Client) => {
      expect(await client.numbers("a")).toEqual([7])
      expect(await client.allNumbers("a")).toEqual([7])
      expect(await client.numbers("b")).toEqual([0, 1, 2, 3])
      expect(await client.allNumbers("b")).toEqual([0, 1, 2, 3])
    }
    await expectRight(c)
    await node.close()
    await expectRight(new Client(track(await openNode(disk, clock)), new Ids(15)))
  })
})

describe("$all after rewrites and merges", () => {
  it("pages of $all, forward and backward, give the same records as one read across scavenged and merged chunks", async () => {
    const { c } = await fresh(16)
    for (let i = 0; i < 3; i++) {
      await c.appendEach("p", 2, BIG)
      await c.appendEach("q", 1, BIG)
      await c.appendEach("small", 5)
    }
    expect((await c.delete("p", true)).status).toBe(204)
    expect((await c.setMetadata("small", { $maxCount: 4 })).status).toBe(201)
    const id = await c.scavenge()
    expect(
      (await c.history(id))
        .filter((e) => e.eventType === "$scavengeMergeCompleted")
        .map((e) => (e.data as { wasMerged: boolean }).wasMerged)
    ).toContain(true)
    const whole = await c.all()
    expect(whole.filter((e) => e.streamId === "q").map((e) => e.eventNumber)).toEqual([0, 1, 2])
    expect(whole.filter((e) => e.streamId === "small").map((e) => e.eventNumber)).toEqual([11, 12, 13, 14])
    expect(await c.allPaged("forward", 3)).toEqual(whole)
    expect(await c.allPaged("backward", 2)).toEqual(whole)
  })
})

describe("durability (nothing acknowledged is lost)", () => {
  it("after a scavenge and a power loss, everything that must survive is still readable", async () => {
    for (const [seed, mode] of [
      [1, "strict"],
      [2, "random"],
      [3, "random"]
    ] as const) {
      const { c, disk, clock } = await freshNode(20 + seed)
      await c.appendEach("keep", 4, BIG)
      await c.appendEach("trim", 5, BIG)
      await c.appendEach("gone", 2, BIG)
      expect((await c.setMetadata("trim", { $maxCount: 2 })).status).toBe(201)
      expect((await c.delete("gone", true)).status).toBe(204)
      await c.scavenge("threshold=-1")
      await c.appendEach("after", 2)
      const before = {
        keep: await c.read("keep"),
        trim: await c.read("trim"),
        after: await c.read("after"),
        all: await c.all()
      }
      disk.memory.crash(new Prng(seed), mode)
      await c.node.close().catch(() => undefined)

      const again = new Client(track(await openNode(disk, clock)), new Ids(30 + seed))
      expect(await again.read("keep")).toEqual(before.keep)
      expect(await again.read("trim")).toEqual(before.trim)
      expect(await again.read("after")).toEqual(before.after)
      expect((await again.read("gone")).status).toBe(410)
      const userStreams = (all: ReadonlyArray<{ streamId: string }>) =>
        all.filter((e) => ["keep", "trim", "gone", "after"].includes(e.streamId))
      expect(userStreams(await again.all())).toEqual(userStreams(before.all))
    }
  })
})
