/**
 * `GET /info` (spec/http.md §7.1): version, lower-cased node state, features and the authentication provider.
 * The body is JSON whatever was negotiated (the reference serializes with its JSON codec and only labels the
 * reply with the negotiated type); that quirk is kept so clients see what they see from the reference.
 */
import { Effect, Ref } from "effect"
import type { Reply } from "../Reply.js"
import type { RouteDef } from "../Route.js"
import { NodeInfo, type NodeIdentity, type NodeState } from "./NodeInfo.js"
import { InfoCodecs } from "./ping.js"
import { documentReply, indentedJson } from "./replies.js"

export interface InfoDocument {
  readonly dbVersion: string
  readonly esVersion: string
  readonly state: string
  readonly features: Readonly<Record<string, boolean>>
  readonly authentication: NodeIdentity["authentication"]
}

export const infoDocument = (identity: NodeIdentity, state: NodeState): InfoDocument => ({
  dbVersion: identity.version,
  esVersion: identity.version,
  state: state.toLowerCase(),
  features: identity.features,
  authentication: identity.authentication
})

export const infoReply = (responseType: string, identity: NodeIdentity, state: NodeState): Reply =>
  documentReply(responseType, indentedJson(infoDocument(identity, state)))

export const infoRoute: RouteDef<NodeInfo> = {
  method: "GET",
  path: "/info",
  access: "anonymous",
  responseCodecs: InfoCodecs,
  handle: (input) =>
    Effect.flatMap(NodeInfo, (info) => Effect.map(Ref.get(info.state), (state) => infoReply(input.responseType, info.identity, state)))
}
