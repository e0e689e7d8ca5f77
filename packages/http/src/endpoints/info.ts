/**
 * `GET /info`: version, lower-cased node state (its place in the cluster: `leader`, `follower`, …), features and the authentication provider
 * (and, while the node is degraded, a `health` member: health.ts).
 * The body is JSON whatever was negotiated (the reference serializes with its JSON codec and only labels the
 * reply with the negotiated type); that quirk is kept so clients see what they see from the reference.
 */
import { Effect } from "effect"
import { EventStore } from "@vellum/storage"
import type { Reply } from "../Reply.js"
import type { RouteDef } from "../Route.js"
import { nodeHealth, type NodeHealth } from "./health.js"
import type { ClusterStatus, VNodeState } from "@vellum/cluster"
import { NodeInfo, nodeState, type NodeIdentity } from "./NodeInfo.js"
import { InfoCodecs } from "./ping.js"
import { documentReply, indentedJson } from "./replies.js"

export interface InfoDocument {
  readonly dbVersion: string
  readonly esVersion: string
  readonly state: string
  readonly features: Readonly<Record<string, boolean>>
  readonly authentication: NodeIdentity["authentication"]
  /** Vellum addition, present only while the node is degraded (writes refused after a disk error). */
  readonly health?: { readonly status: "degraded"; readonly reason: string }
}

export const infoDocument = (identity: NodeIdentity, state: VNodeState, health?: NodeHealth): InfoDocument => ({
  dbVersion: identity.version,
  esVersion: identity.version,
  state: state.toLowerCase(),
  features: identity.features,
  authentication: identity.authentication,
  ...(health?.status === "degraded" ? { health: { status: "degraded", reason: health.reason } } : {})
})

export const infoReply = (
  responseType: string,
  identity: NodeIdentity,
  state: VNodeState,
  health?: NodeHealth
): Reply => documentReply(responseType, indentedJson(infoDocument(identity, state, health)))

export const infoRoute: RouteDef<NodeInfo | EventStore | ClusterStatus> = {
  method: "GET",
  path: "/info",
  access: "anonymous",
  responseCodecs: InfoCodecs,
  handle: (input) =>
    Effect.flatMap(Effect.all([NodeInfo, EventStore, nodeState]), ([info, store, state]) =>
      Effect.succeed(infoReply(input.responseType, info.identity, state, nodeHealth(store.stats())))
    )
}
