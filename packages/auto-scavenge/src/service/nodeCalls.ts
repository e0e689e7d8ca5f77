/**
 * The leader's calls to a member's node scavenger — start one, ask for the last one, stop it — either on
 * this node's own scavenger or over the internal channel to another member's, and the server that answers
 * them on every member. A node scavenge started this way is the one `POST /admin/scavenge` starts with no
 * parameters: one thread, threshold 0, not sync-only.
 */
import { Effect } from "effect"
import type { NetworkService, PeerAddress } from "@vellum/platform"
import type { ScavengeProgress, ScavengerService } from "@vellum/scavenge"
import type { StartOutcome, StopOutcome } from "../domain/assess.js"
import { sameNode, type NodeId } from "../domain/NodeId.js"
import { decodeAnswer, encodeMessage, type LastResult, type NodeAdminRequest } from "./messages.js"

/** Where a member's scavenger is: this node's own, or another member's (`node`) at its internal address. */
export type ScavengerAt =
  { readonly _tag: "Local" } | { readonly _tag: "Remote"; readonly node: NodeId; readonly address: PeerAddress }

export type LastAnswer =
  | { readonly _tag: "Unreachable"; readonly message: string }
  | {
      readonly _tag: "Answered"
      readonly scavengeId: string
      readonly result: LastResult
      readonly progress: ScavengeProgress | undefined
    }

export interface NodeScavengeCalls {
  readonly start: (at: ScavengerAt) => Effect.Effect<StartOutcome>
  readonly last: (at: ScavengerAt) => Effect.Effect<LastAnswer>
  /** `scavengeId` undefined stops whatever runs there. */
  readonly stop: (at: ScavengerAt, scavengeId: string | undefined) => Effect.Effect<StopOutcome>
}

export interface CallTimeouts {
  /** Start and last answer at once. */
  readonly answerMillis: number
  /** A stop answers once the scavenge has stopped (at its next checkpoint). */
  readonly stopMillis: number
}

export const defaultCallTimeouts: CallTimeouts = { answerMillis: 5_000, stopMillis: 30_000 }

const DefaultStart = { threads: 1, threshold: undefined, throttlePercent: 100, syncOnly: false, startFromChunk: 0 }

/** What this node's scavenger answers, whoever asks. */
const onScavenger = (scavenger: ScavengerService) => ({
  start: Effect.match(scavenger.start(DefaultStart), {
    onSuccess: ({ scavengeId }) => ({ scavengeId }) as const,
    onFailure: (refused) => ({ refused: refused.message }) as const
  }),
  last: Effect.gen(function* () {
    const last = yield* scavenger.last
    const current = yield* scavenger.current
    return { scavengeId: last.scavengeId, result: last.result, progress: current?.progress }
  }),
  stop: (scavengeId: string) =>
    Effect.match(scavenger.stop(scavengeId), {
      onSuccess: () => "Stopped" as const,
      onFailure: () => "NotFound" as const
    })
})

export const makeNodeScavengeCalls = (
  scavenger: ScavengerService,
  network: NetworkService | undefined,
  timeouts: CallTimeouts = defaultCallTimeouts
): NodeScavengeCalls => {
  const local = onScavenger(scavenger)
  const ask = <Op extends NodeAdminRequest["op"]>(
    at: { readonly address: PeerAddress },
    request: NodeAdminRequest & { op: Op },
    millis: number
  ) => {
    const address = at.address
    return network === undefined
      ? Effect.succeed({ _tag: "Unreachable" as const, message: "no internal channel" })
      : Effect.match(network.request(address, encodeMessage(request), millis), {
          onFailure: (e) => ({ _tag: "Unreachable" as const, message: e.message }),
          onSuccess: (bytes) => {
            const answer = decodeAnswer(request.op as Op, bytes)
            return answer === undefined
              ? { _tag: "Unreachable" as const, message: `a malformed answer from ${address}` }
              : { _tag: "Answer" as const, answer }
          }
        })
  }
  return {
    start: (at) =>
      at._tag === "Local"
        ? Effect.map(local.start, (s): StartOutcome =>
            "scavengeId" in s ? { _tag: "Started", scavengeId: s.scavengeId } : { _tag: "Failed", message: s.refused }
          )
        : Effect.map(ask(at, { op: "startScavenge", node: at.node }, timeouts.answerMillis), (r): StartOutcome => {
            if (r._tag === "Unreachable") return { _tag: "Failed", message: r.message }
            const started = r.answer.started
            return "scavengeId" in started
              ? { _tag: "Started", scavengeId: started.scavengeId }
              : { _tag: "Failed", message: started.refused }
          }),
    last: (at) =>
      at._tag === "Local"
        ? Effect.map(local.last, (l): LastAnswer => ({ _tag: "Answered", ...l }))
        : Effect.map(ask(at, { op: "lastScavenge", node: at.node }, timeouts.answerMillis), (r): LastAnswer =>
            r._tag === "Unreachable"
              ? r
              : {
                  _tag: "Answered",
                  scavengeId: r.answer.scavengeId,
                  result: r.answer.result,
                  progress: r.answer.progress
                }
          ),
    stop: (at, scavengeId) =>
      at._tag === "Local"
        ? local.stop(scavengeId ?? "current")
        : Effect.map(
            ask(at, { op: "stopScavenge", node: at.node, scavengeId: scavengeId ?? "current" }, timeouts.stopMillis),
            (r): StopOutcome => (r._tag === "Unreachable" ? { failed: r.message } : r.answer.outcome)
          )
  }
}

/**
 * Answers the leader's scavenge calls with this node's scavenger. A call meant for another node (`self`:
 * this node as auto-scavenge names it) gets no answer, as the reference's call to a replaced member's old
 * endpoint finds nobody there: the leader retries until gossip drops that member. A start that reaches a
 * node now leading a cluster (a call sent before an election, delivered after it) is refused: a leader is
 * scavenged only once it has resigned, and its own driver, finding itself designated, resigns first.
 */
export const nodeScavengeHandler =
  (scavenger: ScavengerService, self: Effect.Effect<NodeId>, leads: () => boolean) =>
  (request: NodeAdminRequest): Effect.Effect<Uint8Array> =>
    Effect.flatMap(self, (me) => {
      if (request.op !== "command" && !sameNode(request.node, me))
        return Effect.die("a node scavenge call meant for another node")
      if (request.op === "startScavenge" && leads())
        return Effect.succeed(encodeMessage({ op: "startScavenge", started: { refused: LeaderRefusesStart } }))
      return answer(scavenger, request)
    })

export const LeaderRefusesStart = "This node leads the cluster: it is scavenged only after it resigns"

const answer = (scavenger: ScavengerService, request: NodeAdminRequest): Effect.Effect<Uint8Array> => {
  const local = onScavenger(scavenger)
  switch (request.op) {
    case "startScavenge":
      return Effect.map(local.start, (started) => encodeMessage({ op: "startScavenge", started }))
    case "lastScavenge":
      return Effect.map(local.last, (last) => encodeMessage({ op: "lastScavenge", ...last }))
    case "stopScavenge":
      return Effect.map(local.stop(request.scavengeId), (outcome) => encodeMessage({ op: "stopScavenge", outcome }))
    case "command":
      // Commands travel on the auto-scavenge protocol, not this one: no answer, as if lost.
      return Effect.die("a command on the node scavenge protocol")
  }
}
