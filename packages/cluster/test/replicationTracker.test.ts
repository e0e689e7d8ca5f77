import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { ReplicationTracker } from "../src/index.js"

const { ReplicationTracker: Tracker, quorumSize } = ReplicationTracker

describe("the replication checkpoint", () => {
  it("a single node advances on its own flush", () => {
    const t = new Tracker(1)
    expect(t.leaderFlushed(100)).toBe(100)
    expect(t.leaderFlushed(250)).toBe(250)
  })

  it("three nodes need the leader's flush and one replica's ack; five need two", () => {
    const three = new Tracker(3)
    expect(three.leaderFlushed(100)).toBe(0)
    expect(three.replicaAcked("b", 100)).toBe(100)
    const five = new Tracker(5)
    five.leaderFlushed(100)
    expect(five.replicaAcked("b", 100)).toBe(0)
    expect(five.replicaAcked("b", 100)).toBe(0) // the same replica twice is still one
    expect(five.replicaAcked("c", 80)).toBe(80)
    expect(five.replicaAcked("d", 100)).toBe(100)
  })

  it("an ack past the leader's flush is capped at it; an ack below it gives the replica's position", () => {
    const t = new Tracker(3)
    t.leaderFlushed(100)
    expect(t.replicaAcked("b", 500)).toBe(100)
    expect(t.leaderFlushed(400)).toBe(400)
    const u = new Tracker(3)
    u.leaderFlushed(100)
    expect(u.replicaAcked("b", 60)).toBe(60)
  })

  it("stale and out-of-order acks change nothing; the checkpoint never goes back", () => {
    const t = new Tracker(3)
    t.leaderFlushed(300)
    t.replicaAcked("b", 200)
    expect(t.replicaAcked("b", 100)).toBe(200)
    t.replicaLost("b")
    expect(t.replicated).toBe(200)
    expect(t.leaderFlushed(400)).toBe(200) // lost before a quorum for 400: progress stalls
    expect(t.replicaAcked("b", 400)).toBe(400) // it rejoined
  })

  it("acks from read-only replicas never count", () => {
    const t = new Tracker(3)
    t.leaderFlushed(100)
    expect(t.replicaAcked("r", 100, false)).toBe(0)
  })

  it("is the quorum-th highest of what the voters hold, capped at the leader, and never decreases", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(1, 2, 3, 4, 5),
        fc.array(
          fc.oneof(
            fc.record({ kind: fc.constant("leader" as const), step: fc.nat(100) }),
            fc.record({
              kind: fc.constant("ack" as const),
              replica: fc.constantFrom("b", "c", "d", "e"),
              at: fc.nat(2000)
            }),
            fc.record({ kind: fc.constant("lost" as const), replica: fc.constantFrom("b", "c", "d", "e") })
          ),
          { maxLength: 60 }
        ),
        (size, ops) => {
          const t = new Tracker(size)
          let leader = 0
          const held = new Map<string, number>()
          let previous = 0
          for (const op of ops) {
            if (op.kind === "leader") t.leaderFlushed((leader += op.step))
            else if (op.kind === "lost") {
              t.replicaLost(op.replica)
              held.delete(op.replica)
            } else {
              t.replicaAcked(op.replica, op.at)
              held.set(op.replica, Math.max(held.get(op.replica) ?? 0, op.at))
            }
            const positions = [leader, ...[...held.values()].map((p) => Math.min(p, leader))].sort((a, b) => b - a)
            const now = positions.length >= quorumSize(size) ? positions[quorumSize(size) - 1]! : 0
            expect(t.replicated).toBe(Math.max(previous, now))
            expect(t.replicated).toBeLessThanOrEqual(leader)
            previous = t.replicated
          }
        }
      ),
      { numRuns: 300 }
    )
  })
})
