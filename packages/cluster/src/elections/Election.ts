/**
 * Leader election as a pure state machine: Raft's terms and votes (docs/decisions.md says why not the
 * reference's views and proposals), with the three additions a production Raft needs and the reference's
 * behaviour asks for:
 * - pre-votes: a node first asks whether it could win, without raising its term, so a node that was cut off
 *   cannot depose a healthy leader when it comes back;
 * - leader stickiness: a node that heard from its leader within an election timeout refuses to vote for
 *   anyone else, unless the leader itself hands over (resignation);
 * - check-quorum: a leader that has not heard from a quorum for an election timeout steps down, as the
 *   reference's leader does when it loses its quorum.
 *
 * The term is the epoch number: a node that wins term T writes epoch T at the start of its log's new part,
 * so a log's last epoch is Raft's "last log term" and its writer checkpoint is the "last log index". A vote
 * goes only to a candidate whose log is at least as far as the voter's (`compareTips`).
 *
 * Nothing here does I/O or reads a clock: each call takes the time and a random draw, and returns the new
 * state, the promise to write and sync (before anything is sent: a vote is a promise), and the messages.
 */
import { assert } from "@vellum/platform"

/** How far a node's log reaches: the number of its last epoch, then its writer checkpoint. */
export interface LogTip {
  readonly epochNumber: number
  readonly writerCheckpoint: number
}

export const compareTips = (a: LogTip, b: LogTip): number =>
  a.epochNumber !== b.epochNumber ? a.epochNumber - b.epochNumber : a.writerCheckpoint - b.writerCheckpoint

/** What a node has promised, durably: the highest term it has seen, and whom it voted for in that term. */
export interface VotePromise {
  readonly term: number
  readonly votedFor: string | undefined
}

export type ElectionMessage =
  | {
      readonly _tag: "RequestVote"
      /** The term the candidate stands for (for a pre-vote: the term it would stand for). */
      readonly term: number
      readonly candidate: string
      readonly tip: LogTip
      readonly preVote: boolean
      /** The leader handed over to this candidate: stickiness does not apply. */
      readonly transfer: boolean
    }
  | {
      readonly _tag: "VoteReply"
      readonly term: number
      readonly voter: string
      readonly granted: boolean
      readonly preVote: boolean
    }
  | { readonly _tag: "Heartbeat"; readonly term: number; readonly leader: string }
  | { readonly _tag: "HeartbeatReply"; readonly term: number; readonly follower: string }
  | { readonly _tag: "TimeoutNow"; readonly term: number; readonly leader: string }

export type ElectionRole =
  | { readonly _tag: "Follower"; readonly leader: string | undefined }
  | { readonly _tag: "PreCandidate"; readonly granted: ReadonlySet<string> }
  | { readonly _tag: "Candidate"; readonly granted: ReadonlySet<string> }
  | { readonly _tag: "Leader"; readonly heardFrom: ReadonlyMap<string, number> }

export interface ElectionState {
  readonly promise: VotePromise
  readonly role: ElectionRole
  /** When a follower or candidate stands for election if nothing happens first; a leader's next heartbeat. */
  readonly deadline: number
  /** When this node last heard from the leader of its term (stickiness). */
  readonly leaderSeenAt: number
}

export interface ElectionSettings {
  readonly self: string
  /** Every voting member, this node included. */
  readonly voters: ReadonlyArray<string>
  /** The election timeout's base: a node waits between it and twice it (more for a lower priority). */
  readonly electionTimeoutMillis: number
  readonly heartbeatMillis: number
}

/** What the node knows at a step: the time, its log, its priority rank, and a random draw in [0, 1). */
export interface ElectionContext {
  readonly now: number
  readonly tip: LogTip
  /** 0 for the node with the highest priority among the voters; a lower priority waits longer to stand. */
  readonly priorityRank: number
  readonly random: () => number
  /**
   * Present while this node is a new machine — it started with no vote promise and no log, and has not
   * received a leader's epoch since — in a cluster that may be older than it: `othersHaveEpochs` says a
   * member it heard of holds an epoch. A new machine at a member's address may be a replacement, and its
   * predecessor's promises are lost with the old disk: voting or standing now could give a term two
   * leaders. So it neither promises its vote nor stands until it has followed a leader, unless the cluster
   * is new too (no member holds an epoch, and the candidate asking holds none).
   */
  readonly newcomer?: { readonly othersHaveEpochs: boolean }
}

export interface Outgoing {
  readonly to: string
  readonly message: ElectionMessage
}

export interface ElectionStep {
  readonly state: ElectionState
  /** Write and sync this before sending any message of the step. */
  readonly persist: VotePromise | undefined
  readonly send: ReadonlyArray<Outgoing>
  /** The term this node has just become leader of. */
  readonly elected: number | undefined
}

export const quorumOf = (voters: number): number => Math.floor(voters / 2) + 1

const others = (settings: ElectionSettings) => settings.voters.filter((v) => v !== settings.self)

/** The next time a follower or candidate stands: random in the timeout, later for a lower priority. */
const standAt = (settings: ElectionSettings, ctx: ElectionContext, extra = 0): number => {
  const base = settings.electionTimeoutMillis
  const rankDelay = Math.floor((ctx.priorityRank * base) / Math.max(1, settings.voters.length))
  return ctx.now + base + Math.floor(ctx.random() * base) + rankDelay + extra
}

const step = (state: ElectionState, extra: Partial<Omit<ElectionStep, "state">> = {}): ElectionStep => ({
  state,
  persist: extra.persist,
  send: extra.send ?? [],
  elected: extra.elected
})

/** A node starting (or restarting) with the promise it had synced: a follower that knows no leader. */
export const startElection = (
  settings: ElectionSettings,
  promise: VotePromise,
  ctx: ElectionContext
): ElectionState => {
  assert(settings.voters.includes(settings.self), "Election: this node is one of the voters")
  assert(settings.heartbeatMillis < settings.electionTimeoutMillis, "Election: heartbeats come faster than timeouts")
  return {
    promise,
    role: { _tag: "Follower", leader: undefined },
    deadline: standAt(settings, ctx),
    leaderSeenAt: -Infinity
  }
}

/** Asks every other voter for a pre-vote (a single voter wins at once). */
const preVote = (settings: ElectionSettings, state: ElectionState, ctx: ElectionContext): ElectionStep => {
  const pre: ElectionState = {
    ...state,
    role: { _tag: "PreCandidate", granted: new Set([settings.self]) },
    deadline: standAt(settings, ctx)
  }
  if (quorumOf(settings.voters.length) <= 1) return stand(settings, pre, ctx, false)
  const message: ElectionMessage = {
    _tag: "RequestVote",
    term: state.promise.term + 1,
    candidate: settings.self,
    tip: ctx.tip,
    preVote: true,
    transfer: false
  }
  return step(pre, { send: others(settings).map((to) => ({ to, message })) })
}

/** Stands for the next term: votes for itself (a promise) and asks the others. */
const stand = (
  settings: ElectionSettings,
  state: ElectionState,
  ctx: ElectionContext,
  transfer: boolean
): ElectionStep => {
  const promise: VotePromise = { term: state.promise.term + 1, votedFor: settings.self }
  const candidate: ElectionState = {
    ...state,
    promise,
    role: { _tag: "Candidate", granted: new Set([settings.self]) },
    deadline: standAt(settings, ctx)
  }
  if (quorumOf(settings.voters.length) <= 1) return lead(settings, candidate, ctx, promise)
  const message: ElectionMessage = {
    _tag: "RequestVote",
    term: promise.term,
    candidate: settings.self,
    tip: ctx.tip,
    preVote: false,
    transfer
  }
  return step(candidate, { persist: promise, send: others(settings).map((to) => ({ to, message })) })
}

/** Won: leads its term and tells everyone at once. */
const lead = (
  settings: ElectionSettings,
  state: ElectionState,
  ctx: ElectionContext,
  persist: VotePromise | undefined
): ElectionStep => {
  const leader: ElectionState = {
    ...state,
    role: { _tag: "Leader", heardFrom: new Map() },
    deadline: ctx.now + settings.heartbeatMillis,
    leaderSeenAt: ctx.now
  }
  const message: ElectionMessage = { _tag: "Heartbeat", term: state.promise.term, leader: settings.self }
  return step(leader, { persist, send: others(settings).map((to) => ({ to, message })), elected: state.promise.term })
}

/** Time passes: stand for election when the deadline passed; a leader sends heartbeats and checks its quorum. */
export const tick = (settings: ElectionSettings, state: ElectionState, ctx: ElectionContext): ElectionStep => {
  if (ctx.now < state.deadline) return step(state)
  if (state.role._tag !== "Leader" && ctx.newcomer?.othersHaveEpochs === true)
    return step({ ...state, deadline: standAt(settings, ctx) }) // a new machine waits to follow a leader
  if (state.role._tag !== "Leader") return preVote(settings, state, ctx)
  const heardFrom = state.role.heardFrom
  const recent = others(settings).filter(
    (v) => (heardFrom.get(v) ?? -Infinity) >= ctx.now - settings.electionTimeoutMillis
  )
  // Check-quorum: once a leader has led for a whole timeout, it needs a quorum that still answers.
  if (
    ctx.now - state.leaderSeenAt >= settings.electionTimeoutMillis &&
    recent.length + 1 < quorumOf(settings.voters.length)
  ) {
    return step({ ...state, role: { _tag: "Follower", leader: undefined }, deadline: standAt(settings, ctx) })
  }
  const message: ElectionMessage = { _tag: "Heartbeat", term: state.promise.term, leader: settings.self }
  return step(
    { ...state, deadline: ctx.now + settings.heartbeatMillis },
    { send: others(settings).map((to) => ({ to, message })) }
  )
}

/** Whether a message carries a term that makes this node a follower of a newer term. */
const raisesTerm = (state: ElectionState, message: ElectionMessage): boolean => {
  if (message.term <= state.promise.term) return false
  // A pre-vote asks about a term nobody stands for yet; its replies do not raise terms either.
  if (message._tag === "RequestVote" && message.preVote) return false
  if (message._tag === "VoteReply" && message.preVote) return false
  return true
}

/**
 * The node leads (check-quorum deposes a leader that lost its quorum), or follows a leader it heard from
 * within an election timeout.
 */
const stuckToLeader = (settings: ElectionSettings, state: ElectionState, now: number): boolean =>
  state.role._tag === "Leader" ||
  (state.role._tag === "Follower" &&
    state.role.leader !== undefined &&
    now - state.leaderSeenAt < settings.electionTimeoutMillis)

/** A message from another voter. */
export const receive = (
  settings: ElectionSettings,
  state: ElectionState,
  message: ElectionMessage,
  ctx: ElectionContext
): ElectionStep => {
  // Stickiness: while its leader is alive, a node ignores candidates (the leader's handover excepted).
  if (message._tag === "RequestVote" && !message.transfer && stuckToLeader(settings, state, ctx.now)) {
    return step(state, { send: [reply(settings, state.promise.term, message, false)] })
  }
  let current = state
  let persist: VotePromise | undefined
  if (raisesTerm(state, message)) {
    persist = { term: message.term, votedFor: undefined }
    const leader = message._tag === "Heartbeat" ? message.leader : undefined
    current = { ...state, promise: persist, role: { _tag: "Follower", leader }, deadline: standAt(settings, ctx) }
  }
  const result = handle(settings, current, message, ctx)
  return { ...result, persist: result.persist ?? persist }
}

const reply = (
  settings: ElectionSettings,
  term: number,
  request: Extract<ElectionMessage, { _tag: "RequestVote" }>,
  granted: boolean
): Outgoing => ({
  to: request.candidate,
  message: { _tag: "VoteReply", term, voter: settings.self, granted, preVote: request.preVote }
})

const handle = (
  settings: ElectionSettings,
  state: ElectionState,
  message: ElectionMessage,
  ctx: ElectionContext
): ElectionStep => {
  const { promise, role } = state
  switch (message._tag) {
    case "RequestVote": {
      // A new machine promises no vote (a pre-vote promises nothing, so it answers those as any node: a
      // candidate behind in its log may still stand, and its higher term then reaches the others).
      const newcomer = ctx.newcomer
      if (!message.preVote && newcomer !== undefined && (newcomer.othersHaveEpochs || message.tip.epochNumber >= 0))
        return step(state, { send: [reply(settings, promise.term, message, false)] })
      const upToDate = compareTips(message.tip, ctx.tip) >= 0
      if (message.preVote) {
        // Would this node vote for it in the term it names? (Nothing is promised.)
        return step(state, { send: [reply(settings, message.term, message, message.term > promise.term && upToDate)] })
      }
      const free = promise.votedFor === undefined || promise.votedFor === message.candidate
      if (message.term < promise.term || !free || !upToDate) {
        return step(state, { send: [reply(settings, promise.term, message, false)] })
      }
      const vote: VotePromise = { term: promise.term, votedFor: message.candidate }
      return step(
        { ...state, promise: vote, deadline: standAt(settings, ctx) },
        { persist: vote, send: [reply(settings, promise.term, message, true)] }
      )
    }
    case "VoteReply": {
      if (message.preVote) {
        if (role._tag !== "PreCandidate" || message.term !== promise.term + 1 || !message.granted) return step(state)
        const granted = new Set(role.granted).add(message.voter)
        const next: ElectionState = { ...state, role: { _tag: "PreCandidate", granted } }
        return granted.size >= quorumOf(settings.voters.length) ? stand(settings, next, ctx, false) : step(next)
      }
      if (role._tag !== "Candidate" || message.term !== promise.term || !message.granted) return step(state)
      const granted = new Set(role.granted).add(message.voter)
      const next: ElectionState = { ...state, role: { _tag: "Candidate", granted } }
      return granted.size >= quorumOf(settings.voters.length) ? lead(settings, next, ctx, undefined) : step(next)
    }
    case "Heartbeat": {
      const answer: Outgoing = {
        to: message.leader,
        message: { _tag: "HeartbeatReply", term: promise.term, follower: settings.self }
      }
      if (message.term < promise.term) return step(state, { send: [answer] }) // a stale leader learns the term
      assert(role._tag !== "Leader", "Election: one leader per term")
      return step(
        {
          ...state,
          role: { _tag: "Follower", leader: message.leader },
          deadline: standAt(settings, ctx),
          leaderSeenAt: ctx.now
        },
        { send: [answer] }
      )
    }
    case "HeartbeatReply": {
      if (role._tag !== "Leader" || message.term !== promise.term) return step(state)
      const heardFrom = new Map(role.heardFrom).set(message.follower, ctx.now)
      return step({ ...state, role: { _tag: "Leader", heardFrom } })
    }
    case "TimeoutNow": {
      if (message.term !== promise.term || role._tag === "Leader") return step(state)
      return stand(settings, { ...state, leaderSeenAt: -Infinity }, ctx, true)
    }
  }
}

/**
 * The leader resigns: it steps down, hands the next election to `successor` (the most caught-up follower,
 * which the caller knows from replication), and waits longer than the others before it stands again.
 */
export const resign = (
  settings: ElectionSettings,
  state: ElectionState,
  successor: string | undefined,
  ctx: ElectionContext
): ElectionStep => {
  if (state.role._tag !== "Leader") return step(state)
  const follower: ElectionState = {
    ...state,
    role: { _tag: "Follower", leader: undefined },
    deadline: standAt(settings, ctx, settings.electionTimeoutMillis),
    leaderSeenAt: -Infinity
  }
  if (successor === undefined || successor === settings.self) return step(follower)
  return step(follower, {
    send: [{ to: successor, message: { _tag: "TimeoutNow", term: state.promise.term, leader: settings.self } }]
  })
}
