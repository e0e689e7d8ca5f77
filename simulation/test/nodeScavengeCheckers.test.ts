// The auto-scavenge seeds' rules over node scavenges, each shown to fail on a trace or on chunk files built
// by hand, and the chunk comparison run on a real converged cluster whose members are scavenged one by one.
import { describe, expect, it } from "vitest"
import type { LastScavenge } from "@vellum/scavenge"
import { NodeScavengeLog, checkOneAtATime, type NodeScavenge } from "../src/cluster/nodeScavenges.js"
import { compareChunkImages, compareRecordsBelow, type ChunkImages } from "../src/cluster/scavengedChunks.js"
import type { LogImage } from "../src/cluster/logImages.js"
import { runClusterSeed } from "../src/cluster/runClusterSeed.js"
import type { ClusterWorld } from "../src/cluster/clusterWorld.js"

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`
const last = (n: number, result: LastScavenge["result"]): LastScavenge => ({ scavengeId: id(n), result })

describe("node scavenges: at most one at a time in the cluster", () => {
  it("records each member's runs from what its scavenger shows, and a crash ends a run", () => {
    const log = new NodeScavengeLog()
    log.tick()
    expect(log.observe("n1", "1", last(1, "InProgress"), 10)).toBeUndefined()
    log.tick()
    log.observe("n1", "1", last(1, "Success"), 20)
    log.tick()
    // A run that started and ended between two looks.
    log.observe("n2", "1", last(2, "Stopped"), 30)
    log.tick()
    log.observe("n3", "1", last(3, "InProgress"), 40)
    log.cut("n3", 50)
    expect(log.runs.map((r) => [r.node, r.outcome, r.startedAt, r.endedAt])).toEqual([
      ["n1", "Success", 10, 20],
      ["n2", "Stopped", 30, 30],
      ["n3", "Crashed", 40, 50]
    ])
    expect(log.running()).toEqual([])
    expect(checkOneAtATime(log.runs)).toBeUndefined()
    expect(log.lastEnded("n1")?.scavengeId).toBe(id(1))
  })

  it("fails a run that starts while another member's runs", () => {
    const log = new NodeScavengeLog()
    log.tick()
    log.observe("n1", "1", last(1, "InProgress"), 10)
    log.tick()
    expect(log.observe("n2", "1", last(2, "InProgress"), 20)).toMatch(/two node scavenges at once: n2's .* n1's/)
    // A new lifetime of the same member starts from the all-zero id: nothing new until a run shows.
    log.tick()
    expect(log.observe("n1", "2", { scavengeId: "00000000-0000-0000-0000-000000000000", result: "Unknown" }, 30)).toBe(
      undefined
    )
  })

  it("over a finished trace: overlapping runs of two members fail, back-to-back runs pass", () => {
    const run = (node: string, startSeq: number, endSeq: number | undefined): NodeScavenge => ({
      node,
      scavengeId: `${node}-${startSeq}`,
      startSeq,
      startedAt: startSeq,
      ...(endSeq === undefined ? {} : { endSeq, endedAt: endSeq, outcome: "Success" as const })
    })
    expect(checkOneAtATime([run("n1", 1, 5), run("n2", 5, 9), run("n3", 10, undefined)])).toBeUndefined()
    expect(checkOneAtATime([run("n1", 1, 5), run("n2", 4, 9)])).toMatch(/n2's .* n1's/)
    expect(checkOneAtATime([run("n1", 1, undefined), run("n2", 40, 41)])).toMatch(/two node scavenges/)
  })
})

describe("scavenged chunks compared between members", () => {
  const file = (start: number, end: number, fill: number, length = 300) => ({
    name: `chunk-${start}.1`,
    startNumber: start,
    endNumber: end,
    bytes: Buffer.alloc(length, fill)
  })
  const images = (node: string, files: ChunkImages["files"]): ChunkImages => ({ node, files })

  it("files covering the same chunks must be identical; merged differently, they are left to the records", () => {
    const a = images("n1", [file(0, 1, 1), file(2, 2, 2)])
    expect(compareChunkImages(a, images("n2", [file(0, 1, 1), file(2, 2, 2)]), 2)).toBeUndefined()
    const flipped = file(2, 2, 2)
    flipped.bytes[200] = 9
    expect(compareChunkImages(a, images("n2", [file(0, 1, 1), flipped]), 2)).toMatch(/differ at byte 200/)
    expect(compareChunkImages(a, images("n2", [file(0, 1, 1), flipped]), 1)).toBeUndefined()
    expect(compareChunkImages(a, images("n2", [file(0, 0, 1), file(1, 3, 2)]), 2)).toBeUndefined()
    expect(compareChunkImages(a, images("n2", [file(0, 1, 1)]), 2)).toMatch(/missing/)
  })

  it("below the point's chunk every member holds the same records: one scavenged and one kept fails", () => {
    const image = (node: string, fingerprints: Array<string>): LogImage => ({
      node,
      committed: 1000,
      records: fingerprints.map((fingerprint, i) => ({ position: i * 100, fingerprint })),
      epochs: []
    })
    const a = image("n1", ["e", "a", "sp", "later"])
    expect(compareRecordsBelow(a, image("n2", ["e", "a", "sp", "other"]), 300)).toBeUndefined()
    expect(compareRecordsBelow(a, image("n2", ["e", "x", "sp"]), 300)).toMatch(/differ at 100/)
    const kept = image("n2", ["e", "a", "sp"])
    expect(compareRecordsBelow({ ...a, records: a.records.filter((r) => r.position !== 100) }, kept, 300)).toMatch(
      /differ at 100/
    )
  })

  it("on a converged 3-voter cluster, every member scavenged by hand to one point holds identical chunks", () => {
    let outcome: string | undefined = "not run"
    const r = runClusterSeed(7, {
      nodes: 3,
      // Watched, but no schedule: the members are scavenged by hand below.
      overrides: {
        autoScavenge: {
          replaceNodes: false,
          schedule: undefined,
          firstDueMs: 0,
          operatorGapMs: [1_000, 1_000],
          pauseChance: 0,
          targetedFaults: false
        }
      },
      afterConvergence: (cluster) => {
        const leader = cluster.leaders()[0]!
        const followers = cluster.members.map((m) => m.name).filter((n) => n !== leader)
        for (const name of [leader, ...followers]) {
          if (!scavengeByHand(cluster, name)) return void (outcome = `${name}'s scavenge did not finish`)
        }
        // The observer's next sample compares them.
        cluster.run({ maxSimMs: 1_000 })
        outcome = undefined
      }
    })
    expect(r.failure).toBeUndefined()
    expect(outcome).toBeUndefined()
    expect(r.coverage.count("autoScavenge.chunksCompared")).toBe(1)
    expect(r.coverage.count("autoScavenge.nodeScavengeRan")).toBe(
      r.options.voters + (r.options.readOnlyReplica ? 1 : 0)
    )
  })
})

const AdminAuthorization = `Basic ${Buffer.from("admin:changeit").toString("base64")}`

/** POST /admin/scavenge on the member, then runs the world until its run ended and its point is known. */
const scavengeByHand = (cluster: ClusterWorld, name: string): boolean => {
  const member = cluster.member(name)
  const before = cluster.scavenges.runs.length
  const inFlight = cluster.access.start(name, {
    method: "POST",
    url: "/admin/scavenge",
    headers: { host: member.http, authorization: AdminAuthorization },
    body: undefined
  })
  if (inFlight === undefined) return false
  const done = () => {
    const run = cluster.scavenges.runs[before]
    return run !== undefined && run.outcome !== undefined && run.point !== undefined
  }
  cluster.run({ until: done, maxSimMs: 60_000 })
  // Let the followers receive the point before the next one runs.
  cluster.run({ maxSimMs: 500 })
  return done()
}
