import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Election } from "../src/index.js"
import { ElectionCluster, NoFaults, type Happened } from "./electionCluster.js"

const settings = (self: string, voters = ["a", "b", "c"]): Election.ElectionSettings => ({
  self,
  voters,
  electionTimeoutMillis: 1000,
  heartbeatMillis: 100
})
const ctx = (now: number, tip: Election.LogTip = { epochNumber: 1, writerCheckpoint: 100 }, rank = 0) => ({
  now,
  tip,
  priorityRank: rank,
  random: () => 0.5
})

/** Safety over everything that happened in a run. */
const checkSafety = (happened: Happened) => {
  // One leader per term.
  const byTerm = new Map<number, string>()
  for (const e of happened.elected) {
    const other = byTerm.get(e.term)
    expect(other === undefined || other === e.leader, `term ${e.term}: ${other} and ${e.leader} both won`).toBe(true)
    byTerm.set(e.term, e.leader)
  }
  // One vote per voter per term.
  const votes = new Map<string, string>()
  for (const v of happened.votes) {
    const key = `${v.term}/${v.voter}`
    const other = votes.get(key)
    expect(other === undefined || other === v.candidate, `${v.voter} voted twice in term ${v.term}`).toBe(true)
    votes.set(key, v.candidate)
  }
  // A node's promised term never goes back, across restarts too.
  for (const [node, promises] of happened.promises) {
    for (let i = 1; i < promises.length; i++)
      expect(promises[i]!.term, `${node}'s promise went back`).toBeGreaterThanOrEqual(promises[i - 1]!.term)
  }
}

describe("election: a new machine at a member's address", () => {
  const s = settings("c")
  const noLog: Election.LogTip = { epochNumber: -1, writerCheckpoint: 0 }
  const request = (tip: Election.LogTip, preVote = false): Election.ElectionMessage => ({
    _tag: "RequestVote",
    term: 4,
    candidate: "a",
    tip,
    preVote,
    transfer: false
  })
  const fresh = (othersHaveEpochs: boolean) => ({ ...ctx(0, noLog), newcomer: { othersHaveEpochs } })
  const granted = (step: Election.ElectionStep) =>
    step.send.map((o) => (o.message as { granted?: boolean }).granted).filter((g) => g !== undefined)

  it("promises its vote to no one while others hold epochs, or while the candidate holds one (its predecessor's vote is lost)", () => {
    const start = Election.startElection(s, { term: 0, votedFor: undefined }, fresh(true))
    const up = { epochNumber: 3, writerCheckpoint: 900 }
    expect(granted(Election.receive(s, start, request(up), fresh(true)))).toEqual([false])
    expect(granted(Election.receive(s, start, request(up), fresh(false)))).toEqual([false])
    // A pre-vote promises nothing: answered as any node answers it.
    expect(granted(Election.receive(s, start, request(up, true), fresh(true)))).toEqual([true])
    const vote = Election.receive(s, start, request({ epochNumber: 3, writerCheckpoint: 900 }), fresh(true))
    expect(vote.persist?.votedFor).toBeUndefined()
  })

  it("does not stand while others hold epochs; in a new cluster it votes and stands as any node", () => {
    const start = Election.startElection(s, { term: 0, votedFor: undefined }, fresh(true))
    const waited = Election.tick(s, start, { ...fresh(true), now: start.deadline })
    expect(waited.send).toEqual([])
    expect(waited.state.deadline).toBeGreaterThan(start.deadline)
    expect(Election.tick(s, start, { ...fresh(false), now: start.deadline }).send.length).toBeGreaterThan(0)
    expect(granted(Election.receive(s, start, request(noLog), fresh(false)))).toEqual([true])
  })
})

describe("election: the rules, one at a time", () => {
  it("a single voter elects itself at its first deadline, promising its vote first", () => {
    const s = settings("a", ["a"])
    const start = Election.startElection(s, { term: 3, votedFor: undefined }, ctx(0))
    expect(Election.tick(s, start, ctx(start.deadline - 1)).elected).toBeUndefined()
    const won = Election.tick(s, start, ctx(start.deadline))
    expect(won.elected).toBe(4)
    expect(won.persist).toEqual({ term: 4, votedFor: "a" })
    expect(won.state.role._tag).toBe("Leader")
  })

  it("a pre-vote raises no term and promises nothing; a quorum of pre-votes makes the node stand", () => {
    const s = settings("a")
    const start = Election.startElection(s, { term: 2, votedFor: undefined }, ctx(0))
    const pre = Election.tick(s, start, ctx(start.deadline))
    expect(pre.persist).toBeUndefined()
    expect(pre.state.promise.term).toBe(2)
    expect(pre.send.map((o) => [o.to, o.message._tag, (o.message as { preVote: boolean }).preVote])).toEqual([
      ["b", "RequestVote", true],
      ["c", "RequestVote", true]
    ])
    const granted = Election.receive(
      s,
      pre.state,
      { _tag: "VoteReply", term: 3, voter: "b", granted: true, preVote: true },
      ctx(start.deadline + 5)
    )
    expect(granted.persist).toEqual({ term: 3, votedFor: "a" })
    expect(granted.state.role._tag).toBe("Candidate")
  })

  it("a voter grants one vote per term, only to a log at least as far as its own, and promises it", () => {
    const s = settings("b")
    const b = Election.startElection(s, { term: 5, votedFor: undefined }, ctx(0))
    const ask = (candidate: string, tip: Election.LogTip, term = 6): Election.ElectionMessage => ({
      _tag: "RequestVote",
      term,
      candidate,
      tip,
      preVote: false,
      transfer: false
    })
    const behind = Election.receive(s, b, ask("a", { epochNumber: 1, writerCheckpoint: 99 }), ctx(10))
    expect(behind.send[0]!.message).toMatchObject({ _tag: "VoteReply", granted: false, term: 6 })
    expect(behind.persist).toEqual({ term: 6, votedFor: undefined })
    const yes = Election.receive(s, behind.state, ask("a", { epochNumber: 2, writerCheckpoint: 0 }), ctx(11))
    expect(yes.persist).toEqual({ term: 6, votedFor: "a" })
    expect(yes.send[0]!.message).toMatchObject({ granted: true })
    const again = Election.receive(s, yes.state, ask("c", { epochNumber: 9, writerCheckpoint: 0 }), ctx(12))
    expect(again.send[0]!.message).toMatchObject({ granted: false })
    const stale = Election.receive(s, yes.state, ask("c", { epochNumber: 9, writerCheckpoint: 0 }, 5), ctx(13))
    expect(stale.send[0]!.message).toMatchObject({ granted: false, term: 6 })
  })

  it("a follower that hears from its leader refuses other candidates, unless the leader hands over", () => {
    const s = settings("b")
    const b0 = Election.startElection(s, { term: 5, votedFor: undefined }, ctx(0))
    const following = Election.receive(s, b0, { _tag: "Heartbeat", term: 5, leader: "a" }, ctx(100)).state
    const ask = (transfer: boolean, preVote: boolean): Election.ElectionMessage => ({
      _tag: "RequestVote",
      term: 6,
      candidate: "c",
      tip: { epochNumber: 5, writerCheckpoint: 500 },
      preVote,
      transfer
    })
    for (const preVote of [true, false]) {
      const refused = Election.receive(s, following, ask(false, preVote), ctx(200))
      expect(refused.send[0]!.message).toMatchObject({ granted: false })
      expect(refused.state.promise.term).toBe(5)
    }
    expect(Election.receive(s, following, ask(true, false), ctx(200)).send[0]!.message).toMatchObject({
      granted: true
    })
    // Once the leader has been silent for an election timeout, the follower votes again.
    expect(Election.receive(s, following, ask(false, true), ctx(1200)).send[0]!.message).toMatchObject({
      granted: true
    })
  })

  it("a leader that stops hearing from its quorum steps down after an election timeout", () => {
    const s = settings("a", ["a"])
    const leader = Election.tick(
      s,
      Election.startElection(s, { term: 0, votedFor: undefined }, ctx(0)),
      ctx(5000)
    ).state
    const s3 = settings("a")
    let state: Election.ElectionState = { ...leader, promise: { term: 1, votedFor: "a" } }
    let now = 5000
    state = Election.receive(s3, state, { _tag: "HeartbeatReply", term: 1, follower: "b" }, ctx(now + 10)).state
    for (; now < 5000 + 900; now += 100) state = Election.tick(s3, state, ctx(now)).state
    expect(state.role._tag).toBe("Leader")
    for (; now < 5000 + 2500; now += 100) state = Election.tick(s3, state, ctx(now)).state
    expect(state.role._tag).toBe("Follower")
  })

  it("a resigning leader hands the next election to its successor, which stands at once", () => {
    const cluster = new ElectionCluster(7, 3, NoFaults)
    cluster.run(10_000)
    const [leader] = cluster.leaders()
    expect(leader).toBeDefined()
    cluster.resign(leader!.name)
    const resignedAt = cluster.now
    cluster.run(resignedAt + 300)
    const [next] = cluster.leaders()
    expect(next?.name).toBeDefined()
    expect(next!.name).not.toBe(leader!.name)
    expect(next!.term).toBe(leader!.term + 1)
    checkSafety(cluster.happened)
  })
})

describe("election: randomized clusters", () => {
  it("with no faults, one leader is elected, with a log at least as far as a quorum's, and stays", () => {
    for (let seed = 1; seed <= 30; seed++) {
      const cluster = new ElectionCluster(seed, 3 + 2 * (seed % 2), NoFaults)
      const tips = new Map(cluster.nodes.map((n) => [n.name, n.tip]))
      cluster.run(10_000)
      const leaders = cluster.leaders()
      expect(leaders, `seed ${seed}`).toHaveLength(1)
      const won = tips.get(leaders[0]!.name)!
      const notAhead = [...tips.values()].filter((t) => Election.compareTips(won, t) >= 0).length
      expect(notAhead, `seed ${seed}: the leader's log is behind a quorum`).toBeGreaterThanOrEqual(
        Election.quorumOf(cluster.nodes.length)
      )
      const before = cluster.happened.elected.length
      cluster.run(60_000)
      expect(cluster.happened.elected.length, `seed ${seed}: the leader was deposed without a fault`).toBe(before)
      checkSafety(cluster.happened)
    }
  })

  it("among equally far logs, the voter with the highest priority is elected most often", () => {
    let first = 0
    for (let seed = 1; seed <= 40; seed++) {
      const cluster = new ElectionCluster(seed, 3, NoFaults, 1000, 100, true)
      cluster.run(10_000)
      if (cluster.leaders()[0]?.name === "n0") first++
    }
    // Without the priority delay each of three would win about a third of the time.
    expect(first).toBeGreaterThan(24)
  })

  it("safety under loss, duplication, delays, partitions and crashes; a leader once the faults stop", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.constantFrom(3, 4, 5),
        fc.record({
          lossChance: fc.constantFrom(0, 0.1, 0.3),
          duplicateChance: fc.constantFrom(0, 0.1, 0.3),
          maxDelayMillis: fc.constantFrom(5, 50, 400),
          crashChance: fc.constantFrom(0, 0.001, 0.01),
          partitionChance: fc.constantFrom(0, 0.001, 0.005)
        }),
        (seed, size, faults) => {
          const cluster = new ElectionCluster(seed, size, faults)
          cluster.run(30_000)
          checkSafety(cluster.happened)
          // Liveness: faults stop, the network heals, every node is up again within 3 s.
          cluster.faults = NoFaults
          cluster.heal()
          cluster.run(cluster.now + 20_000)
          const leaders = cluster.leaders()
          expect(leaders, `seed ${seed}: one leader, no stale one left`).toHaveLength(1)
          const top = leaders[0]!.term
          const leader = leaders.find((l) => l.term === top)!
          for (const n of cluster.nodes) {
            const role = n.state!.role
            if (n.name !== leader.name)
              expect(role, `seed ${seed}: ${n.name} follows`).toEqual({ _tag: "Follower", leader: leader.name })
          }
          checkSafety(cluster.happened)
        }
      ),
      { numRuns: Number(process.env.VELLUM_ELECTION_RUNS ?? 60) }
    )
  })
})
