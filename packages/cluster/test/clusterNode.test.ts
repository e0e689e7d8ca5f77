// Cluster members (gossip, elections, replication) on three simulated nodes joined by the simulated
// network, over in-memory logs (fakeReplicaLog.ts): a leader is elected and leads once its epoch is on a
// quorum; writes it acknowledges reach every node's committed log; when its node dies another leads and
// no acknowledged write is lost; the dead node comes back as a follower.
import { Exit } from "effect"
import { describe, expect, it } from "vitest"
import { address, cluster, names, replicaName, succeeded } from "./memberCluster.js"

describe("cluster members over the simulated network", () => {
  it("elect one leader, which replicates what it acknowledges to every node", () => {
    for (const seed of [1, 2, 3]) {
      const c = cluster(seed)
      c.world.run({ maxSimMs: 8_000 })
      const leaders = c.leaders()
      expect(leaders, `seed ${seed}: ${names.map((n) => c.status.get(n)?.state()).join(",")}`).toHaveLength(1)
      const leader = leaders[0]!
      for (const n of names.filter((m) => m !== leader))
        expect(c.status.get(n)!.state(), `seed ${seed}: ${n}`).toBe("Follower")
      for (let i = 0; i < 5; i++) {
        const exit = c.run(leader, c.logs.get(leader)!.append(`w${i}`))
        expect(exit !== null && Exit.isSuccess(exit), `seed ${seed}: write ${i}`).toBe(true)
      }
      c.world.run({ maxSimMs: 3_000 })
      for (const n of names)
        expect(
          c.logs
            .get(n)!
            .committedPayloads()
            .filter((p) => p.startsWith("w")),
          `seed ${seed}: ${n}`
        ).toEqual(["w0", "w1", "w2", "w3", "w4"])
    }
  })

  it("replace a dead leader in a later term without losing an acknowledged write; the old leader follows", () => {
    const c = cluster(7)
    c.world.run({ maxSimMs: 8_000 })
    const [first] = c.leaders()
    expect(first).toBeDefined()
    const acked: Array<string> = []
    for (let i = 0; i < 3; i++) {
      const exit = c.run(first!, c.logs.get(first!)!.append(`a${i}`))
      if (exit !== null && Exit.isSuccess(exit)) acked.push(`a${i}`)
    }
    expect(acked).toHaveLength(3)
    c.world.crash(first!)
    c.world.run({ maxSimMs: 8_000 })
    const others = names.filter((n) => n !== first)
    const second = c.leaders(others)
    expect(second).toHaveLength(1)
    const exit = c.run(second[0]!, c.logs.get(second[0]!)!.append("b0"))
    expect(exit !== null && Exit.isSuccess(exit)).toBe(true)
    c.world.restart(first!)
    c.start(first!)
    c.world.run({ maxSimMs: 8_000 })
    expect(c.status.get(first!)!.state()).toBe("Follower")
    for (const n of names)
      expect(
        c.logs
          .get(n)!
          .committedPayloads()
          .filter((p) => /^[ab]/.test(p)),
        n
      ).toEqual([...acked, "b0"])
  })

  it("acknowledge nothing a quorum does not hold: a leader cut off from its followers keeps its writes waiting", () => {
    const c = cluster(11)
    c.world.run({ maxSimMs: 8_000 })
    const [leader] = c.leaders()
    expect(leader).toBeDefined()
    c.network.isolate(address(leader!))
    const exit = c.run(leader!, c.logs.get(leader!)!.append("lonely"), 1_500)
    expect(exit === null || !Exit.isSuccess(exit)).toBe(true)
    // A leader without its quorum steps down within a few election timeouts; the others elect one of them.
    c.world.run({ maxSimMs: 8_000 })
    expect(c.status.get(leader!)!.state()).not.toBe("Leader")
    expect(c.leaders(names.filter((n) => n !== leader))).toHaveLength(1)
  })

  it("resign: the leader drains, hands over to a caught-up follower, and follows it", () => {
    const c = cluster(5)
    c.world.run({ maxSimMs: 8_000 })
    const [first] = c.leaders()
    expect(first).toBeDefined()
    expect(succeeded(c.run(first!, c.logs.get(first!)!.append("before")))).toBe(true)
    c.run(first!, c.status.get(first!)!.resign)
    c.world.run({ maxSimMs: 5_000 })
    const [second] = c.leaders()
    expect(second).toBeDefined()
    expect(second).not.toBe(first)
    expect(c.status.get(first!)!.state()).toBe("Follower")
    expect(succeeded(c.run(second!, c.logs.get(second!)!.append("after")))).toBe(true)
    c.world.run({ maxSimMs: 2_000 })
    for (const n of names)
      expect(
        c.logs
          .get(n)!
          .committedPayloads()
          .filter((p) => !p.startsWith("epoch"))
      ).toEqual(["before", "after"])
  })

  it("a read-only replica follows the leader, never counts toward its quorum and never leads", () => {
    const c = cluster(3, undefined, true)
    c.world.run({ maxSimMs: 8_000 })
    const [leader] = c.leaders()
    expect(leader).toBeDefined()
    expect(c.status.get(replicaName)!.state()).toBe("ReadOnlyReplica")
    expect(succeeded(c.run(leader!, c.logs.get(leader!)!.append("w0")))).toBe(true)
    c.world.run({ maxSimMs: 2_000 })
    expect(c.logs.get(replicaName)!.committedPayloads()).toContain("w0")
    // With both other voters cut off, the replica's acks alone make no quorum.
    for (const n of names.filter((m) => m !== leader)) c.network.isolate(address(n))
    expect(succeeded(c.run(leader!, c.logs.get(leader!)!.append("w1"), 1_500))).toBe(false)
    c.world.run({ maxSimMs: 10_000 })
    expect(c.status.get(replicaName)!.state()).not.toBe("Leader")
    expect(c.logs.get(replicaName)!.committedPayloads()).not.toContain("w1")
  })
})
