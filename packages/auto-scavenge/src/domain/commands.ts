/**
 * The commands users send (configure, pause, resume, status) decided against the state: the events to
 * record and the reply to give once they are recorded. The driver rejects every one of them with "Node is
 * not the leader" before they get here when this node does not lead.
 */
import type { AutoScavengeEvent } from "./events.js"
import type { NextOccurrence } from "./Schedule.js"
import { publicStateOf, type AutoScavengeState, type PublicState } from "./State.js"

export type UserCommand =
  | { readonly _tag: "Configure"; readonly schedule: string }
  | { readonly _tag: "Pause" }
  | { readonly _tag: "Resume" }
  | { readonly _tag: "GetStatus" }

/** The reference's status body; `timeUntilNextCycle` in milliseconds here (the route formats it). */
export interface StatusBody {
  readonly state: PublicState
  readonly schedule: string | null
  readonly timeUntilNextCycleMillis: number | null
}

export type CommandReply =
  /** 200 with `{}`. */
  | { readonly _tag: "Done" }
  /** 202: accepted, under way (a pause while a node scavenge is being stopped). */
  | { readonly _tag: "Accepted" }
  /** 400 with the message as a JSON string. */
  | { readonly _tag: "Rejected"; readonly message: string }
  | { readonly _tag: "Status"; readonly status: StatusBody }

export interface Decision {
  readonly events: ReadonlyArray<AutoScavengeEvent>
  readonly reply: CommandReply
}

const done: CommandReply = { _tag: "Done" }

export const statusOf = (state: AutoScavengeState, now: number, next: NextOccurrence): StatusBody => {
  const base = { state: publicStateOf(state.status), schedule: state.schedule ?? null }
  if (state.clusterScavenge !== undefined) return { ...base, timeUntilNextCycleMillis: 0 }
  if (state.schedule === undefined) return { ...base, timeUntilNextCycleMillis: null }
  // Paused while idle: what it would be if resumed now.
  const from = state.status === "PausedWhileIdle" ? now : (state.anchor ?? state.startingPoint ?? now)
  const at = next(state.schedule, from)
  return { ...base, timeUntilNextCycleMillis: at === undefined ? null : Math.max(0, at - now) }
}

export const decide = (state: AutoScavengeState, command: UserCommand, now: number, next: NextOccurrence): Decision => {
  switch (command._tag) {
    case "Configure":
      return { events: [{ _tag: "ConfigurationUpdated", schedule: command.schedule, updatedAt: now }], reply: done }
    case "Pause":
      switch (state.status) {
        case "PausedWhileIdle":
        case "PausedWhileScavengingCluster":
          return { events: [], reply: done }
        case "Pausing":
          return { events: [], reply: { _tag: "Accepted" } }
        case "NotConfigured":
        case "Waiting":
        case "ContinuingClusterScavenge":
          return { events: [{ _tag: "Paused", pausedAt: now }], reply: done }
        case "StartingNodeScavenge":
        case "MonitoringNodeScavenge":
          return { events: [{ _tag: "PauseRequested", requestedAt: now }], reply: { _tag: "Accepted" } }
      }
    // eslint-disable-next-line no-fallthrough -- every status returns above
    case "Resume":
      switch (state.status) {
        case "PausedWhileIdle":
        case "PausedWhileScavengingCluster":
          return { events: [{ _tag: "Resumed", resumedAt: now }], reply: done }
        case "Pausing":
          return { events: [], reply: { _tag: "Rejected", message: "Auto scavenge process is currently pausing" } }
        default:
          return { events: [], reply: done }
      }
    case "GetStatus":
      return { events: [], reply: { _tag: "Status", status: statusOf(state, now, next) } }
  }
}
