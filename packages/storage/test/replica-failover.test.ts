/**
 * Three clustered stores through random histories: client appends to the leader, followers pulling parts
 * of its log, the quorum gate passing what a follower holds (3 nodes: the leader and one follower), leader
 * changes to the best log of a random majority (Raft's rule: its last epoch, then its length), diverged
 * tails cut back to the newest epoch both logs share, scavenge points (which complete chunks), and crashes. At the end the nodes hold the same log,
 * and every append that was acknowledged is in it exactly once.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect, Either, Fiber } from "effect"
import { Prng } from "@vellum/platform"
import type { EpochRef, ReplicaLog } from "../src/index.js"
import { ev, readAll } from "./streams-harness.js"
import { HeldGate, ID_A, openNode, rawLog, settle, sliceAt, type Node } from "./replica-support.js"

const SEEDS = 30
const STEPS = 80

/** Where a follower's log stops agreeing with the leader's (the newest epoch both have decides it). */
const commonPoint = (
  leader: ReadonlyArray<EpochRef>,
  follower: ReadonlyArray<EpochRef>,
  leaderEnd: number,
  followerEnd: number
) => {
  const same = (x: EpochRef, y: EpochRef) =>
    x.position === y.position && x.epochNumber === y.epochNumber && x.epochId === y.epochId
  const f = follower.findIndex((e) => leader.some((l) => same(l, e)))
  if (f < 0) return 0
  const common = follower[f]!
  const candidate = f > 0 ? follower[f - 1]!.position : followerEnd
  const l = leader.findIndex((e) => same(e, common))
  return Math.min(candidate, l === 0 ? leaderEnd : leader[l - 1]!.position)
}

const run = (seed: number) =>
  Effect.gen(function* () {
    const prng = new Prng(seed)
    const nodes: Array<Node> = [yield* openNode(), yield* openNode(), yield* openNode()]
    let leader = 0
    let term = 1
    let gate = new HeldGate()
    const leading: Array<Fiber.RuntimeFiber<EpochRef, unknown>> = []
    leading.push(yield* Effect.fork(nodes[0]!.replica.lead(term, ID_A, gate.gate)))
    const appends: Array<{ readonly id: string; readonly fiber: Fiber.RuntimeFiber<Either.Either<unknown, unknown>> }> =
      []
    let nextEvent = 1
    let cuts = 0
    const followers = () => [0, 1, 2].filter((i) => i !== leader)
    const replicate = (i: number, slices: number) =>
      Effect.gen(function* () {
        const from = nodes[leader]!.replica
        const to = nodes[i]!.replica
        for (let k = 0; k < slices; k++) {
          const slice = yield* sliceAt(from, to.writerCheckpoint(), prng.int(100, 1500))
          if (slice === undefined) break
          yield* to.appendRaw(slice)
        }
        // The quorum is the leader and its best follower.
        yield* gate.release(Math.max(...followers().map((j) => nodes[j]!.replica.writerCheckpoint())))
        yield* settle
        yield* to.commitTo(from.committed())
      })
    const electFrom = (majority: ReadonlyArray<number>) =>
      Effect.gen(function* () {
        let best = majority[0]!
        let bestKey: [number, number] = [-1, -1]
        for (const i of majority) {
          const r: ReplicaLog = nodes[i]!.replica
          const last = (yield* r.epochs(1))[0]
          const key: [number, number] = [last?.epochNumber ?? -1, r.writerCheckpoint()]
          if (key[0] > bestKey[0] || (key[0] === bestKey[0] && key[1] > bestKey[1])) {
            best = i
            bestKey = key
          }
        }
        return best
      })
    const failover = Effect.gen(function* () {
      yield* nodes[leader]!.replica.stopLeading
      yield* settle
      const out = prng.int(0, 2)
      leader = yield* electFrom([0, 1, 2].filter((i) => i !== out))
      term += 1 + prng.int(0, 1)
      gate = new HeldGate()
      for (const i of followers()) {
        const r = nodes[i]!.replica
        const at = commonPoint(
          yield* nodes[leader]!.replica.epochs(100),
          yield* r.epochs(100),
          nodes[leader]!.replica.writerCheckpoint(),
          r.writerCheckpoint()
        )
        if (at < r.writerCheckpoint()) {
          yield* r.truncate(at)
          cuts++
        }
      }
      leading.push(yield* Effect.fork(nodes[leader]!.replica.lead(term, ID_A, gate.gate)))
      yield* settle
    })

    for (let step = 0; step < STEPS; step++) {
      const roll = prng.next()
      if (roll < 0.4) {
        const id = ev(nextEvent++).eventId
        const stream = `s${prng.int(0, 2)}`
        const data = "x".repeat(prng.int(10, 700))
        const append = nodes[leader]!.store.append(stream, -2, [{ ...ev(0, { data, isJson: false }), eventId: id }])
        appends.push({ id, fiber: yield* Effect.fork(Effect.either(append)) })
        yield* settle
      } else if (roll < 0.43) {
        // A scavenge point completes the leader's chunk (the followers' too, when they receive it).
        yield* Effect.fork(Effect.either(nodes[leader]!.store.writeScavengePoint(0, 0)))
        yield* settle
      } else if (roll < 0.8) {
        yield* replicate(prng.pick(followers()), prng.int(1, 3))
      } else if (roll < 0.92) {
        yield* failover
      } else {
        const i = prng.pick(followers())
        yield* nodes[i]!.crash(seed * 1000 + step)
      }
    }
    // Quiet: the followers catch up, and the last term commits everything.
    for (let round = 0; round < 3; round++) for (const i of followers()) yield* replicate(i, 10_000)
    for (const i of followers()) yield* replicate(i, 10_000)
    const acknowledged: Array<string> = []
    for (const { id, fiber } of appends) {
      const outcome = yield* Fiber.join(fiber)
      if (Either.isRight(outcome)) acknowledged.push(id)
    }
    const final = nodes[leader]!
    const events = yield* readAll(final.store)
    for (const node of nodes) {
      assert.strictEqual(node.replica.committed(), final.replica.committed(), `seed ${seed}: all committed`)
      assert.deepStrictEqual(yield* rawLog(node.replica), yield* rawLog(final.replica), `seed ${seed}: same log`)
      assert.deepStrictEqual(yield* readAll(node.store), events, `seed ${seed}: same events`)
    }
    const ids = events.map((e) => e.eventId)
    assert.strictEqual(new Set(ids).size, ids.length, `seed ${seed}: no event twice`)
    for (const id of acknowledged) assert.include(ids, id, `seed ${seed}: acknowledged ${id} is kept`)
    return {
      rolledOver: final.replica.writerCheckpoint() > final.replica.chunkSize ? 1 : 0,
      acknowledged: acknowledged.length,
      terms: term,
      cuts,
      lost: appends.length - acknowledged.length
    }
  })

describe("replica: random failovers among three stores", () => {
  it.scoped(`${SEEDS} seeds: the same log everywhere, every acknowledged append in it once`, () =>
    Effect.gen(function* () {
      let acknowledged = 0
      let terms = 0
      let cuts = 0
      let lost = 0
      let rolledOver = 0
      for (let seed = 1; seed <= SEEDS; seed++) {
        const result = yield* Effect.scoped(run(seed))
        acknowledged += result.acknowledged
        terms += result.terms
        cuts += result.cuts
        lost += result.lost
        rolledOver += result.rolledOver
      }
      assert.isAbove(acknowledged, SEEDS * 5, "appends were acknowledged")
      assert.isAbove(terms, SEEDS * 3, "leaders changed")
      assert.isAbove(cuts, SEEDS, "diverged tails were cut")
      assert.isAbove(lost, SEEDS, "appends were lost with their leader")
      assert.isAbove(rolledOver, SEEDS / 2, "logs of several chunks")
    })
  )
})
