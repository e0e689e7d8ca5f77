/**
 * How a node folds the gossip it receives into what it knows (push-pull: the receiver merges, then answers
 * with its merged view). Pure functions; the gossip service applies them.
 *
 * The rules:
 * - a node knows itself best: what others say about it is ignored;
 * - the sender knows itself best: its own record is taken as it sent it (its clock is only checked);
 * - of any other member, a record is taken when it is new, or newer news than what is known: a later
 *   epoch, else a longer log, else a later report;
 * - but whether the leader this node follows is alive, and in which state, is never taken from others —
 *   only the leader itself and this node's own links decide that, so one rumour cannot depose a leader;
 * - members dead for longer than the removal period (`DeadMemberRemovalPeriodSec`, 30 minutes unless set) are
 *   forgotten, except while this node knows no leader (it then keeps every member it ever heard of, to elect
 *   among them);
 * - one internal address is one machine: a member replaced by a new node at the same internal address but
 *   another HTTP endpoint (another key) is forgotten at once — when the new node's own record arrives from
 *   it, when this node is the new one, or when a third member reports the new node later than the old one
 *   was last reported — so the old record does not linger and count as a member (see docs/decisions.md).
 */
import { isLeaderless, type VNodeState } from "./VNodeState.js"
import { memberKey, type MemberInfo } from "./MemberInfo.js"

/** How long a dead member is remembered unless the configuration says otherwise (30 minutes). */
export const DeadMemberRemovalMillis = 30 * 60 * 1000
/** A sender whose clock differs from ours by more than this is reported (its gossip is still merged). */
export const AllowedClockDifferenceMillis = 60 * 1000

/** Whether `incoming` is newer news of a member than `known`: a later epoch, then a longer log, then a later report. */
export const isMoreUpToDate = (incoming: MemberInfo, known: MemberInfo): boolean => {
  if (incoming.epochNumber !== known.epochNumber) return incoming.epochNumber > known.epochNumber
  if (incoming.writerCheckpoint !== known.writerCheckpoint) return incoming.writerCheckpoint > known.writerCheckpoint
  return incoming.timeStamp > known.timeStamp
}

export interface GossipMerge {
  /** This node's own record, as it is now. */
  readonly self: MemberInfo
  /** This node's state (a leaderless node forgets no one). */
  readonly selfState: VNodeState
  /** What this node knew before (its own record among them or not). */
  readonly known: ReadonlyArray<MemberInfo>
  /** What arrived. */
  readonly received: ReadonlyArray<MemberInfo>
  /** The key (`memberKey`) of the member that sent it, when a member sent it. */
  readonly sender: string | undefined
  /** The instance id of the leader this node follows, if any. */
  readonly leaderInstanceId: string | undefined
  readonly nowMillis: number
  /** How long a dead member is remembered. */
  readonly deadMemberRemovalMillis: number
}

export interface GossipMerged {
  /** Every member this node now knows, itself included, ordered by key. */
  readonly members: ReadonlyArray<MemberInfo>
  /** The sender's record was stamped more than `AllowedClockDifferenceMillis` away from our clock. */
  readonly senderClockSkewed: boolean
}

const isSelf = (m: MemberInfo, self: MemberInfo): boolean =>
  m.instanceId === self.instanceId || memberKey(m) === memberKey(self)

const sameAddress = (a: MemberInfo, b: MemberInfo): boolean =>
  a.internalTcpIp === b.internalTcpIp && a.internalTcpPort === b.internalTcpPort

/** The keys of the other records (another key) at `m`'s internal address: members it replaced or that replaced it. */
const othersAt = (members: ReadonlyMap<string, MemberInfo>, m: MemberInfo): Array<string> =>
  [...members.entries()].filter(([key, o]) => key !== memberKey(m) && sameAddress(o, m)).map(([key]) => key)

export const mergeGossip = (input: GossipMerge): GossipMerged => {
  const { self } = input
  const members = new Map<string, MemberInfo>()
  for (const m of input.known) if (!isSelf(m, self) && !sameAddress(m, self)) members.set(memberKey(m), m)
  let senderClockSkewed = false
  for (const m of input.received) {
    if (isSelf(m, self) || sameAddress(m, self)) continue
    const key = memberKey(m)
    const replaced = othersAt(members, m)
    if (key === input.sender) {
      senderClockSkewed = Math.abs(input.nowMillis - m.timeStamp) > AllowedClockDifferenceMillis
      for (const other of replaced) members.delete(other)
      members.set(key, m)
      continue
    }
    // A rumour of one machine under two keys: the later report wins.
    if (replaced.some((other) => members.get(other)!.timeStamp >= m.timeStamp)) continue
    for (const other of replaced) members.delete(other)
    const known = members.get(key)
    if (known !== undefined && !isMoreUpToDate(m, known)) continue
    const isFollowedLeader = known !== undefined && m.instanceId === input.leaderInstanceId
    members.set(key, isFollowedLeader ? { ...m, isAlive: known.isAlive, state: known.state } : m)
  }
  members.set(memberKey(self), self)
  const remembered = forgetDead([...members.values()], input.selfState, input.nowMillis, input.deadMemberRemovalMillis)
  return { members: remembered, senderClockSkewed }
}

/** Drops members dead for longer than `removalMillis` (none while leaderless); orders by key. */
export const forgetDead = (
  members: ReadonlyArray<MemberInfo>,
  selfState: VNodeState,
  nowMillis: number,
  removalMillis: number
): Array<MemberInfo> =>
  members
    .filter((m) => m.isAlive || isLeaderless(selfState) || nowMillis - m.timeStamp < removalMillis)
    .sort((a, b) => (memberKey(a) < memberKey(b) ? -1 : memberKey(a) > memberKey(b) ? 1 : 0))

/**
 * A gossip send to `key` failed: the member is taken for dead at once — unless it is the leader this node
 * follows, whose death only the replication link decides.
 */
export const afterFailedSend = (
  members: ReadonlyArray<MemberInfo>,
  key: string,
  leaderInstanceId: string | undefined
): Array<MemberInfo> =>
  members.map((m) =>
    memberKey(m) === key && m.isAlive && m.instanceId !== leaderInstanceId ? { ...m, isAlive: false } : m
  )

/** A link to `key` was established or a request answered: the member is alive. */
export const afterContact = (members: ReadonlyArray<MemberInfo>, key: string): Array<MemberInfo> =>
  members.map((m) => (memberKey(m) === key && !m.isAlive ? { ...m, isAlive: true } : m))
