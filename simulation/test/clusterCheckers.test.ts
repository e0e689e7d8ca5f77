// The multi-node simulator's safety rules on synthetic histories: each rule passes a correct history and
// fails the broken one it exists for (an ack lost, a follower serving uncommitted data, a divergent committed
// tail, two leaders in one epoch, a leader without a quorum).
import { describe, expect, it } from "vitest"
import { AckLedger, QuorumWatch } from "../src/cluster/ackLedger.js"
import {
  CommittedLog,
  EpochRegistry,
  EpochWatch,
  checkEpochChain,
  type ImageEpoch,
  type ImageRecord,
  type LogImage
} from "../src/cluster/logImages.js"

const records = (...fingerprints: Array<string>): Array<ImageRecord> =>
  fingerprints.map((fingerprint, i) => ({ position: i * 100, fingerprint }))

const image = (
  node: string,
  committed: number,
  recs: Array<ImageRecord>,
  epochs: Array<ImageEpoch> = []
): LogImage => ({ node, committed, records: recs.filter((r) => r.position < committed), epochs })

const epoch = (epochNumber: number, position: number, leader: string): ImageEpoch => ({
  epochNumber,
  position,
  epochId: `id-${epochNumber}-${leader}`,
  leaderInstanceId: leader
})

describe("committed prefixes agree", () => {
  it("nodes at different committed positions over the same records agree; the prefix grows", () => {
    const log = new CommittedLog()
    const all = records("e0", "a", "b", "c")
    expect(log.check(image("n1", 200, all))).toBeUndefined()
    expect(log.check(image("n2", 400, all))).toBeUndefined()
    expect(log.end).toBe(400)
    // Behind, after a crash: still agrees.
    expect(log.check(image("n3", 100, all))).toBeUndefined()
  })

  it("a divergent committed record fails, whichever node shows it first", () => {
    const log = new CommittedLog()
    expect(log.check(image("n1", 300, records("e0", "a", "b")))).toBeUndefined()
    expect(log.check(image("n2", 400, records("e0", "a", "X", "c")))).toMatch(/committed prefixes disagree.*at 200/)
  })

  it("a committed record missing on another node fails", () => {
    const log = new CommittedLog()
    expect(log.check(image("n1", 300, records("e0", "a", "b")))).toBeUndefined()
    const holed = records("e0", "a", "b").filter((r) => r.position !== 100)
    expect(log.check(image("n2", 300, holed))).toMatch(/disagree/)
  })

  it("below the newest scavenge point a record may be missing (scavenged), never changed; above it, never missing", () => {
    const log = new CommittedLog()
    const all = records("e0", "a", "b", "scavengePoint 0 p", "c")
    expect(log.check(image("n1", 500, all))).toBeUndefined()
    const scavenged = all.filter((r) => r.position !== 100)
    expect(log.check(image("n2", 500, scavenged))).toBeUndefined()
    // A node whose first snapshot comes after it scavenged: the prefix keeps what others showed.
    expect(
      log.check(
        image(
          "n3",
          500,
          all.filter((r) => r.position !== 200)
        )
      )
    ).toBeUndefined()
    expect(
      log.check(
        image(
          "n2",
          500,
          scavenged.map((r) => (r.position === 200 ? { ...r, fingerprint: "B" } : r))
        )
      )
    ).toMatch(/disagree.*at 200/)
    expect(
      log.check(
        image(
          "n2",
          500,
          all.filter((r) => r.position !== 400)
        )
      )
    ).toMatch(/disagree.*at 400/)
  })

  it("a committed record that later changes on the same node fails (a divergent tail cut below commit)", () => {
    const log = new CommittedLog()
    expect(log.check(image("n1", 300, records("e0", "a", "b")))).toBeUndefined()
    expect(log.check(image("n1", 300, records("e0", "a", "z")))).toMatch(/disagree/)
  })
})

describe("epochs", () => {
  it("one epoch number held by two nodes is the same record; two different ones are two leaders", () => {
    const registry = new EpochRegistry()
    expect(registry.check(image("n1", 0, [], [epoch(2, 500, "A"), epoch(1, 0, "A")]))).toBeUndefined()
    expect(registry.check(image("n2", 0, [], [epoch(2, 500, "A"), epoch(1, 0, "A")]))).toBeUndefined()
    expect(registry.check(image("n3", 0, [], [epoch(2, 500, "B"), epoch(1, 0, "A")]))).toMatch(/two leaders in epoch 2/)
  })

  it("epochs along a log strictly increase", () => {
    expect(checkEpochChain(image("n1", 0, [], [epoch(3, 900, "A"), epoch(2, 500, "B")]))).toBeUndefined()
    expect(checkEpochChain(image("n1", 0, [], [epoch(2, 900, "A"), epoch(2, 500, "B")]))).toMatch(/do not increase/)
    expect(checkEpochChain(image("n1", 0, [], [epoch(3, 400, "A"), epoch(2, 500, "B")]))).toMatch(/do not increase/)
  })

  it("a committed epoch stays in a node's log, across restarts too; an uncommitted one may be cut", () => {
    const watch = new EpochWatch()
    expect(watch.check(image("n1", 600, [], [epoch(2, 500, "A"), epoch(1, 0, "A")]), "0")).toBeUndefined()
    // Epoch 3 written but not committed, then cut: fine.
    expect(watch.check(image("n1", 600, [], [epoch(3, 700, "B"), epoch(2, 500, "A")]), "0")).toBeUndefined()
    expect(watch.check(image("n1", 600, [], [epoch(2, 500, "A")]), "0")).toBeUndefined()
    // Restarted with its committed position reloaded lower: the epoch is still in its log.
    expect(watch.check(image("n1", 100, [], [epoch(2, 500, "A"), epoch(1, 0, "A")]), "1")).toBeUndefined()
    expect(watch.check(image("n1", 100, [], [epoch(1, 0, "A")]), "2")).toMatch(/lost its committed epoch 2 at 500/)
  })

  it("a committed position goes back only across a restart", () => {
    const watch = new EpochWatch()
    expect(watch.check(image("n1", 600, []), "0")).toBeUndefined()
    expect(watch.check(image("n1", 300, []), "1")).toBeUndefined()
    expect(watch.check(image("n1", 200, []), "1")).toMatch(/went back from 300 to 200 without a restart/)
  })
})

describe("acknowledged appends and what nodes serve", () => {
  const served = (...ids: Array<string>) => ids.map((eventId, eventNumber) => ({ eventNumber, eventId }))

  it("a node behind the acknowledgement may lag; once its committed position reaches it, it must serve it", () => {
    const ledger = new AckLedger()
    expect(ledger.written({ stream: "s", first: 0, eventIds: ["a", "b"], bound: 500, node: "n1" })).toBeUndefined()
    expect(ledger.checkServed("n2", "s", served(), 400)).toBeUndefined()
    expect(ledger.checkServed("n2", "s", served("a"), 400)).toBeUndefined()
    expect(ledger.checkServed("n2", "s", served("a", "b"), 500)).toBeUndefined()
    expect(ledger.checkServed("n2", "s", served("a"), 500)).toMatch(/lost an acknowledged append/)
  })

  it("an event no acknowledged write and no write in doubt holds is served past the committed position", () => {
    const ledger = new AckLedger()
    ledger.written({ stream: "s", first: 0, eventIds: ["a"], bound: 100, node: "n1" })
    expect(ledger.checkServed("n2", "s", served("a", "x"), 100)).toMatch(/served past the committed position/)
    expect(ledger.checkServed("n2", "s", served("b"), 100)).toMatch(/acknowledged event there is a/)
  })

  it("a write in doubt may be served; served, it must be found written", () => {
    const ledger = new AckLedger()
    ledger.doubt("s", ["d1", "d2"])
    expect(ledger.checkServed("n3", "s", served("d1", "d2"), undefined)).toBeUndefined()
    expect(ledger.settle("s", false)).toMatch(/never committed/)
    ledger.doubt("t", ["e1"])
    expect(ledger.checkServed("n3", "t", served("e1"), undefined)).toBeUndefined()
    expect(ledger.settle("t", true)).toBeUndefined()
    ledger.doubt("u", ["f1"])
    expect(ledger.settle("u", false)).toBeUndefined()
  })

  it("an acknowledgement at the wrong event number fails", () => {
    const ledger = new AckLedger()
    ledger.written({ stream: "s", first: 0, eventIds: ["a"], bound: 100, node: "n1" })
    expect(ledger.written({ stream: "s", first: 3, eventIds: ["b"], bound: 200, node: "n1" })).toMatch(
      /history has 1 events/
    )
  })
})

describe("a leader without a quorum", () => {
  it("steps down within the bound; leading longer fails; paused time does not count", () => {
    const watch = new QuorumWatch(1000)
    expect(watch.observe(0, "n1", true, true, false)).toBeUndefined()
    expect(watch.observe(900, "n1", true, true, false)).toBeUndefined()
    expect(watch.observe(950, "n1", false, true, false)).toBeUndefined()
    expect(watch.observe(2000, "n1", true, true, false)).toBeUndefined()
    expect(watch.observe(2500, "n1", true, false, false)).toBeUndefined()
    expect(watch.observe(3000, "n1", true, true, false)).toBeUndefined()
    expect(watch.observe(4001, "n1", true, true, false)).toMatch(/led without a quorum for 1001 ms/)
    expect(watch.observe(5000, "n2", true, true, true)).toBeUndefined()
  })
})
