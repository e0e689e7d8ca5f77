/**
 * AutoScavenge: the service the HTTP routes talk to. On the leader a command goes through the state
 * machine (recorded, then answered); on any other node it is sent to the leader over the cluster's
 * internal channel and answered as the reference answers a proxied command. The service exists only when
 * auto-scavenge is enabled; without it the routes are not served (404).
 */
import { Context, type Effect } from "effect"
import type { UserCommand } from "./domain/commands.js"

export type AutoScavengeReply =
  /** 200 `{}`. */
  | { readonly _tag: "Done" }
  /** 202, empty: under way (a pause stopping a node scavenge), or a command a follower passed to the leader. */
  | { readonly _tag: "Accepted" }
  /** 400 with the message as a JSON string. */
  | { readonly _tag: "Rejected"; readonly message: string }
  /** 200 with the status document (the reference's three fields first, then Vellum's). */
  | { readonly _tag: "Status"; readonly body: Readonly<Record<string, unknown>> }
  /** 500 problem+json with the detail. */
  | { readonly _tag: "Failed"; readonly detail: string }

/** Figures for `/metrics`: this node's view (a follower reports the state it last heard from the leader). */
export interface AutoScavengeFigures {
  /** The public state, or undefined on a node that does not lead and has not heard from the leader. */
  readonly state: string | undefined
  readonly cyclesStarted: number
  readonly cyclesCompleted: number
  readonly nodeScavengesStarted: number
  readonly nodeScavengesCompleted: Readonly<Record<"Success" | "Stopped" | "Errored", number>>
  /** Members of the cycle under way, and how many are done; 0 with no cycle. */
  readonly cycleMembers: number
  readonly cycleMembersDone: number
  /** Milliseconds until the next cycle is due, when one is scheduled and none runs. */
  readonly timeUntilNextCycleMillis: number | undefined
}

/** The figures of a node that has not heard of any auto-scavenge yet. */
export const noAutoScavengeFigures: AutoScavengeFigures = {
  state: undefined,
  cyclesStarted: 0,
  cyclesCompleted: 0,
  nodeScavengesStarted: 0,
  nodeScavengesCompleted: { Success: 0, Stopped: 0, Errored: 0 },
  cycleMembers: 0,
  cycleMembersDone: 0,
  timeUntilNextCycleMillis: undefined
}

export interface AutoScavengeService {
  readonly execute: (command: UserCommand) => Effect.Effect<AutoScavengeReply>
  readonly figures: Effect.Effect<AutoScavengeFigures>
}

export class AutoScavenge extends Context.Tag("@vellum/auto-scavenge/AutoScavenge")<
  AutoScavenge,
  AutoScavengeService
>() {}
