/**
 * A command sent to a node that does not lead goes to the leader over the internal channel; the answer
 * is given as the reference gives a proxied one: 202 for configure, pause and resume once the leader took
 * them (whatever the leader's own code), the leader's status document as it is, 400 with the leader's
 * reason when it refused, and 500 when no leader is known or it did not answer.
 */
import { Effect } from "effect"
import type { ClusterStatusService, MemberInfo } from "@vellum/cluster"
import type { NetworkService } from "@vellum/platform"
import type { AutoScavengeReply } from "../AutoScavenge.js"
import type { UserCommand } from "../domain/commands.js"
import { decodeAnswer, decodeRequest, encodeMessage } from "./messages.js"

export const ForwardTimeoutMillis = 5_000

const noLeader: AutoScavengeReply = { _tag: "Failed", detail: "No leader node was found in the cluster" }

export const forwardToLeader = (
  cluster: ClusterStatusService,
  network: NetworkService,
  selfRecord: Effect.Effect<MemberInfo>,
  command: UserCommand
): Effect.Effect<AutoScavengeReply> =>
  Effect.gen(function* () {
    const leader = cluster.leader()
    const internal = cluster.internal
    if (leader === undefined || internal === undefined) return noLeader
    const members = yield* cluster.members(yield* selfRecord)
    const member = members.find((m) => m.instanceId === leader.instanceId)
    if (member === undefined) return noLeader
    const sent = yield* Effect.either(
      network.request(internal.addressOf(member), encodeMessage({ op: "command", command }), ForwardTimeoutMillis)
    )
    if (sent._tag === "Left")
      return { _tag: "Failed", detail: `The leader did not answer: ${sent.left.message}` } as const
    const answer = decodeAnswer("command", sent.right)
    if (answer === undefined) return { _tag: "Failed", detail: "The leader's answer could not be read" } as const
    const reply = answer.reply
    return reply._tag === "Done" || reply._tag === "Accepted" ? ({ _tag: "Accepted" } as const) : reply
  })

/** Serves commands other members pass to this node, running them here as the leader. */
export const commandHandler =
  (executeHere: (command: UserCommand) => Effect.Effect<AutoScavengeReply>) =>
  (bytes: Uint8Array): Effect.Effect<Uint8Array> => {
    const request = decodeRequest(bytes)
    if (request === undefined || request.op !== "command") return Effect.die("a malformed auto-scavenge command")
    return Effect.map(executeHere(request.command), (reply) => encodeMessage({ op: "command", reply }))
  }
