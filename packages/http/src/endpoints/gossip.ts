/**
 * `/gossip`: the reference's ClientClusterInfo — every member this node knows (itself included, from
 * `ClusterStatus`) plus the server's address. JSON uses the spec's camelCase names in the reference's order;
 * XML is what XmlSerializer writes for the same object (PascalCase elements under `<ClientClusterInfo>`);
 * text is the object's ToString. This node's own record takes its positions from the store, its epoch from
 * the last `$epoch-information` record, and its state and priority from the cluster status.
 *
 * `GET /gossip` shows the view; `POST /gossip` takes a peer's view in the JSON `GET` answers with, merges it
 * (`ClusterStatus.receiveGossip`) and answers the merged view, push-pull as the nodes gossip among themselves.
 */
import { Clock, Effect, Either } from "effect"
import { EventStore, type EventStoreService } from "@vellum/storage"
import type { Reply } from "../Reply.js"
import type { RouteDef } from "../Route.js"
import { jsonDate, roundTripDate, shortDate } from "./dotnet.js"
import {
  ClusterStatus,
  noEpoch,
  type ClusterInfo,
  type EpochInfo,
  type MemberInfo,
  type VNodeState
} from "@vellum/cluster"
import { NodeInfo, shownState, type NodeIdentity } from "./NodeInfo.js"
import { badRequestReply, documentReply, formatOf, indentedJson } from "./replies.js"
import { parseGossipBody } from "./gossipBody.js"
import { SERIALIZER_NAMESPACES, XML_DECLARATION, textElement, wrapElement } from "./xml.js"

export const GossipCodecs: ReadonlyArray<string> = ["application/json", "application/xml", "text/xml", "text/plain"]

export interface GossipInput {
  readonly identity: NodeIdentity
  readonly state: VNodeState
  readonly timeStampMillis: number
  readonly lastCommitPosition: number
  readonly writerCheckpoint: number
  readonly chaserCheckpoint: number
  readonly epoch: EpochInfo
  /** The priority now (it changes with `POST /admin/node/priority`); the configured one when absent. */
  readonly nodePriority?: number
}

/** This node's own gossip record. Vellum has no client TCP interface, so every TCP port is 0. */
export const selfMember = (input: GossipInput): MemberInfo => {
  const { identity } = input
  const host = identity.httpEndpoint.host
  const port = identity.httpEndpoint.port
  const clientHost = identity.advertiseHost ?? host
  return {
    instanceId: identity.instanceId,
    timeStamp: input.timeStampMillis,
    state: input.state,
    isAlive: true,
    internalTcpIp: host,
    internalTcpPort: 0,
    internalSecureTcpPort: 0,
    externalTcpIp: clientHost,
    externalTcpPort: 0,
    externalSecureTcpPort: 0,
    internalHttpEndPointIp: host,
    internalHttpEndPointPort: port,
    httpEndPointIp: clientHost,
    httpEndPointPort: identity.advertisePort ?? port,
    lastCommitPosition: input.lastCommitPosition,
    writerCheckpoint: input.writerCheckpoint,
    chaserCheckpoint: input.chaserCheckpoint,
    epochPosition: input.epoch.position,
    epochNumber: input.epoch.number,
    epochId: input.epoch.id,
    nodePriority: input.nodePriority ?? identity.nodePriority,
    isReadOnlyReplica: identity.isReadOnlyReplica,
    esVersion: identity.version
  }
}

/** The view `/gossip` answers: the members (this node alone unless given), and the server's address. */
export const clusterInfo = (
  input: GossipInput,
  members: ReadonlyArray<MemberInfo> = [selfMember(input)]
): ClusterInfo => ({
  members,
  serverIp: input.identity.httpEndpoint.host,
  serverPort: input.identity.httpEndpoint.port
})

const memberJson = (m: MemberInfo) => ({ ...m, timeStamp: jsonDate(m.timeStamp) })

/** XmlSerializer's element name for a property: PascalCase, and `ESVersion` as the reference spells it. */
const xmlName = (property: string): string =>
  property === "esVersion" ? "ESVersion" : property.charAt(0).toUpperCase() + property.slice(1)

const xmlValue = (property: keyof MemberInfo, value: MemberInfo[keyof MemberInfo]): string =>
  property === "timeStamp" ? roundTripDate(value as number) : String(value)

const memberXml = (m: MemberInfo): string => {
  let inner = ""
  for (const property of Object.keys(m) as Array<keyof MemberInfo>)
    inner += textElement(xmlName(property), xmlValue(property, m[property]))
  return wrapElement("ClientMemberInfo", inner)
}

/** .NET's `bool.ToString()` and the `{B}` GUID format of the reference's ToString. */
const netBool = (b: boolean): string => (b ? "True" : "False")
const braced = (uuid: string): string => `{${uuid}}`

const memberText = (m: MemberInfo): string =>
  `InstanceId: ${braced(m.instanceId)}, TimeStamp: ${shortDate(m.timeStamp)}, State: ${m.state}, IsAlive: ${netBool(m.isAlive)}, ` +
  `InternalTcpIp: ${m.internalTcpIp}, InternalTcpPort: ${m.internalTcpPort}, InternalSecureTcpPort: ${m.internalSecureTcpPort}, ` +
  `ExternalTcpIp: ${m.externalTcpIp}, ExternalTcpPort: ${m.externalTcpPort}, ExternalSecureTcpPort: ${m.externalSecureTcpPort}, ` +
  `InternalHttpEndPointIp: ${m.internalHttpEndPointIp}, InternalHttpEndPointPort: ${m.internalHttpEndPointPort}, ` +
  `HttpEndPointIp: ${m.httpEndPointIp}, HttpEndPointPort: ${m.httpEndPointPort}, ` +
  `LastCommitPosition: ${m.lastCommitPosition}, WriterCheckpoint: ${m.writerCheckpoint}, ChaserCheckpoint: ${m.chaserCheckpoint}, ` +
  `EpochPosition: ${m.epochPosition}, EpochNumber: ${m.epochNumber}, EpochId: ${braced(m.epochId)}, NodePriority: ${m.nodePriority}, ` +
  // The reference's format string has a stray `$` before the version; kept so text output matches it.
  `IsReadOnlyReplica: ${netBool(m.isReadOnlyReplica)}, DBVersion: $${m.esVersion}`

export const gossipBody = (responseType: string, info: ClusterInfo): string => {
  switch (formatOf(responseType)) {
    case "xml": {
      const members = wrapElement("Members", info.members.map(memberXml).join(""))
      const server = textElement("ServerIp", info.serverIp) + textElement("ServerPort", String(info.serverPort))
      return XML_DECLARATION + wrapElement("ClientClusterInfo", members + server, SERIALIZER_NAMESPACES)
    }
    case "text":
      return `Server: ${info.serverIp}:${info.serverPort}, Members: [${info.members.map(memberText).join(",")}]`
    case "json":
      return indentedJson({
        members: info.members.map(memberJson),
        serverIp: info.serverIp,
        serverPort: info.serverPort
      })
  }
}

/** The gossip reply is never cached. */
export const gossipReply = (responseType: string, info: ClusterInfo): Reply =>
  documentReply(responseType, gossipBody(responseType, info), {
    "Cache-Control": "max-age=0, no-cache, must-revalidate",
    Vary: "Accept"
  })

/** The current epoch: the last event of `$epoch-information` (its JSON data), or `noEpoch`. */
export const currentEpoch = (store: EventStoreService): Effect.Effect<EpochInfo> =>
  store.readEvent("$epoch-information", -1).pipe(
    Effect.map((read) => {
      if (read._tag !== "Success" || read.event.event === undefined) return noEpoch
      try {
        const data = JSON.parse(read.event.event.data.toString("utf8")) as Record<string, unknown>
        const position = typeof data.epochPosition === "number" ? data.epochPosition : noEpoch.position
        const number = typeof data.epochNumber === "number" ? data.epochNumber : noEpoch.number
        const id = typeof data.epochId === "string" ? data.epochId : noEpoch.id
        return { position, number, id }
      } catch {
        return noEpoch
      }
    }),
    Effect.orElseSucceed(() => noEpoch)
  )

/** This node's gossip input now: its state and priority from the cluster status, its positions from the store (its own gossip record: `selfMember`). */
export const gossipInputNow: Effect.Effect<GossipInput, never, NodeInfo | EventStore | ClusterStatus> = Effect.gen(
  function* () {
    const info = yield* NodeInfo
    const cluster = yield* ClusterStatus
    const store = yield* EventStore
    const stats = store.stats()
    return {
      identity: info.identity,
      state: yield* shownState(info, cluster),
      timeStampMillis: yield* Clock.currentTimeMillis,
      lastCommitPosition: stats.committedPosition,
      writerCheckpoint: stats.writerPosition,
      chaserCheckpoint: stats.committedPosition,
      epoch: yield* currentEpoch(store),
      nodePriority: cluster.priority()
    }
  }
)

export const gossipRoute: RouteDef<NodeInfo | EventStore | ClusterStatus> = {
  method: "GET",
  path: "/gossip",
  access: "anonymous",
  responseCodecs: GossipCodecs,
  handle: (input) =>
    Effect.gen(function* () {
      const cluster = yield* ClusterStatus
      const self = yield* gossipInputNow
      const members = yield* cluster.members(selfMember(self))
      return gossipReply(input.responseType, clusterInfo(self, members))
    })
}

/**
 * `POST /gossip`: a peer's (or a tool's) view in, the merged view out. It changes what this node believes of
 * its cluster, so only operators may send it (docs/decisions.md).
 */
export const gossipPostRoute: RouteDef<NodeInfo | EventStore | ClusterStatus> = {
  method: "POST",
  path: "/gossip",
  access: "ops",
  requestCodecs: ["application/json"],
  responseCodecs: GossipCodecs,
  handle: (input) =>
    Effect.gen(function* () {
      const received = parseGossipBody(input.body)
      if (Either.isLeft(received)) return badRequestReply(received.left)
      const cluster = yield* ClusterStatus
      const self = yield* gossipInputNow
      const members = yield* cluster.receiveGossip(selfMember(self), received.right.members)
      return gossipReply(input.responseType, clusterInfo(self, members))
    })
}
