import { describe, expect, it } from "vitest"
import {
  DeadMemberRemovalMillis,
  afterContact,
  afterFailedSend,
  memberKey,
  mergeGossip,
  type GossipMerge,
  type MemberInfo
} from "../src/index.js"
import { NOW, member } from "./memberFixture.js"

const base = (changes: Partial<GossipMerge>): GossipMerge => ({
  self: member(1),
  selfState: "Follower",
  known: [member(1), member(2), member(3)],
  received: [],
  sender: undefined,
  leaderInstanceId: undefined,
  nowMillis: NOW,
  deadMemberRemovalMillis: DeadMemberRemovalMillis,
  ...changes
})

const find = (members: ReadonlyArray<MemberInfo>, n: number) => members.find((m) => m.internalTcpIp === `10.0.0.${n}`)

describe("gossip merge", () => {
  it("ignores what others say about this node", () => {
    const merged = mergeGossip(
      base({ received: [member(1, { state: "Leader", isAlive: false, writerCheckpoint: 999 })] })
    )
    expect(find(merged.members, 1)).toEqual(member(1))
  })

  it("takes the sender's own record as sent, even when it looks older, and reports a skewed clock", () => {
    const known = [member(1), member(2, { writerCheckpoint: 500, epochNumber: 3 })]
    const fromTwo = member(2, { writerCheckpoint: 10, epochNumber: 1, timeStamp: NOW - 2 * 60 * 1000 })
    const merged = mergeGossip(base({ known, received: [fromTwo], sender: memberKey(fromTwo) }))
    expect(find(merged.members, 2)).toEqual(fromTwo)
    expect(merged.senderClockSkewed).toBe(true)
    const onTime = mergeGossip(base({ known, received: [member(2)], sender: memberKey(member(2)) }))
    expect(onTime.senderClockSkewed).toBe(false)
  })

  it("takes a third member's record only when it is new or newer: epoch, then log length, then report time", () => {
    const known = [member(1), member(3, { epochNumber: 2, writerCheckpoint: 200, timeStamp: NOW })]
    const take = (incoming: MemberInfo) =>
      find(mergeGossip(base({ known, received: [incoming], sender: memberKey(member(2)) })).members, 3)
    const laterEpochShorterLog = member(3, { epochNumber: 3, writerCheckpoint: 50, timeStamp: NOW - 1000 })
    expect(take(laterEpochShorterLog)).toEqual(laterEpochShorterLog)
    const sameEpochLongerLog = member(3, { epochNumber: 2, writerCheckpoint: 300, timeStamp: NOW - 1000 })
    expect(take(sameEpochLongerLog)).toEqual(sameEpochLongerLog)
    const sameLogLater = member(3, { epochNumber: 2, writerCheckpoint: 200, timeStamp: NOW + 1, state: "Clone" })
    expect(take(sameLogLater)).toEqual(sameLogLater)
    const older = member(3, { epochNumber: 1, writerCheckpoint: 900, timeStamp: NOW + 5000, isAlive: false })
    expect(take(older)).toEqual(known[1])
    const unknown = member(4)
    expect(find(mergeGossip(base({ received: [unknown] })).members, 4)).toEqual(unknown)
  })

  it("never takes the followed leader's liveness or state from a third member, but takes the rest", () => {
    const leader = member(3, { state: "Leader", epochNumber: 2 })
    const rumour = member(3, { state: "Unknown", isAlive: false, epochNumber: 3, writerCheckpoint: 300 })
    const merged = mergeGossip(
      base({
        known: [member(1), leader],
        received: [rumour],
        sender: memberKey(member(2)),
        leaderInstanceId: leader.instanceId
      })
    )
    expect(find(merged.members, 3)).toEqual({ ...rumour, state: "Leader", isAlive: true })
    // From the leader itself, it is taken.
    const fromLeader = mergeGossip(
      base({
        known: [member(1), leader],
        received: [rumour],
        sender: memberKey(leader),
        leaderInstanceId: leader.instanceId
      })
    )
    expect(find(fromLeader.members, 3)).toEqual(rumour)
  })

  it("forgets members dead for longer than the removal period, unless it knows no leader", () => {
    const longDead = member(2, { isAlive: false, timeStamp: NOW - DeadMemberRemovalMillis - 1 })
    const recentlyDead = member(3, { isAlive: false, timeStamp: NOW - 1000 })
    const known = [member(1), longDead, recentlyDead]
    expect(mergeGossip(base({ known })).members.map((m) => m.internalTcpIp)).toEqual(["10.0.0.1", "10.0.0.3"])
    for (const selfState of ["Unknown", "DiscoverLeader", "Initializing", "ReadOnlyLeaderless"] as const)
      expect(mergeGossip(base({ known, selfState })).members).toHaveLength(3)
  })

  it("forgets a member replaced at its internal address by a node at another HTTP endpoint", () => {
    // Member 2's machine was replaced: the new node has 2's internal address and another HTTP port.
    const replacement = member(2, {
      instanceId: "00000000-0000-4000-8000-0000000000f2",
      internalHttpEndPointPort: 2114,
      httpEndPointPort: 2114,
      timeStamp: NOW + 5000
    })
    const old = member(2, { isAlive: false })
    const keys = (ms: ReadonlyArray<MemberInfo>) => ms.map(memberKey)
    // From the new node itself.
    const fromIt = mergeGossip(
      base({ known: [member(1), old, member(3)], received: [replacement], sender: memberKey(replacement) })
    )
    expect(keys(fromIt.members)).toEqual(["10.0.0.1:2113", "10.0.0.2:2114", "10.0.0.3:2113"])
    // A third member's later report of the new node replaces the old record; its older report of the old
    // record does not bring it back.
    const rumour = mergeGossip(base({ known: [member(1), old], received: [replacement], sender: memberKey(member(3)) }))
    expect(keys(rumour.members)).toEqual(["10.0.0.1:2113", "10.0.0.2:2114"])
    const stale = mergeGossip(base({ known: [member(1), replacement], received: [old], sender: memberKey(member(3)) }))
    expect(keys(stale.members)).toEqual(["10.0.0.1:2113", "10.0.0.2:2114"])
    // The new node itself never keeps the record of the machine it replaced.
    const asNew = mergeGossip(base({ self: replacement, known: [replacement], received: [member(1), old] }))
    expect(keys(asNew.members)).toEqual(["10.0.0.1:2113", "10.0.0.2:2114"])
  })

  it("forgets dead members after the configured removal period", () => {
    const known = [member(1), member(2, { isAlive: false, timeStamp: NOW - 5_001 }), member(3, { isAlive: false })]
    const merged = mergeGossip(base({ known, deadMemberRemovalMillis: 5_000 }))
    expect(merged.members.map((m) => m.internalTcpIp)).toEqual(["10.0.0.1", "10.0.0.3"])
  })

  it("orders members by key and always includes this node's current record", () => {
    const self = member(2, { state: "Leader" })
    const merged = mergeGossip(base({ self, known: [member(3), member(1)], received: [member(4)] }))
    expect(merged.members.map(memberKey)).toEqual(["10.0.0.1:2113", "10.0.0.2:2113", "10.0.0.3:2113", "10.0.0.4:2113"])
    expect(find(merged.members, 2)).toEqual(self)
  })
})

describe("gossip liveness", () => {
  it("a failed send marks a member dead at once, but never the followed leader", () => {
    const members = [member(1), member(2), member(3, { state: "Leader" })]
    const afterTwo = afterFailedSend(members, memberKey(member(2)), members[2]!.instanceId)
    expect(find(afterTwo, 2)?.isAlive).toBe(false)
    const afterLeader = afterFailedSend(members, memberKey(members[2]!), members[2]!.instanceId)
    expect(find(afterLeader, 3)?.isAlive).toBe(true)
  })

  it("contact brings a dead member back to life", () => {
    const members = [member(1), member(2, { isAlive: false })]
    expect(find(afterContact(members, memberKey(member(2))), 2)?.isAlive).toBe(true)
  })
})
