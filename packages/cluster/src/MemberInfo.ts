/**
 * What a node knows of one member of its cluster: the record gossip carries and `GET /gossip` shows, with
 * the reference's field names in the reference's order (each output format renders `timeStamp`, kept here
 * in ms since the Unix epoch).
 */
import type { VNodeState } from "./VNodeState.js"

export const EMPTY_UUID = "00000000-0000-0000-0000-000000000000"

/** The newest epoch a node has written or received: its position in the log, number and id. */
export interface EpochInfo {
  readonly position: number
  readonly number: number
  readonly id: string
}

export const noEpoch: EpochInfo = { position: -1, number: -1, id: EMPTY_UUID }

export interface MemberInfo {
  readonly instanceId: string
  readonly timeStamp: number
  readonly state: VNodeState
  readonly isAlive: boolean
  readonly internalTcpIp: string
  readonly internalTcpPort: number
  readonly internalSecureTcpPort: number
  readonly externalTcpIp: string
  readonly externalTcpPort: number
  readonly externalSecureTcpPort: number
  readonly internalHttpEndPointIp: string
  readonly internalHttpEndPointPort: number
  readonly httpEndPointIp: string
  readonly httpEndPointPort: number
  readonly lastCommitPosition: number
  readonly writerCheckpoint: number
  readonly chaserCheckpoint: number
  readonly epochPosition: number
  readonly epochNumber: number
  readonly epochId: string
  readonly nodePriority: number
  readonly isReadOnlyReplica: boolean
  readonly esVersion: string
}

/** A node's view of its cluster, as `GET /gossip` answers it. */
export interface ClusterInfo {
  readonly members: ReadonlyArray<MemberInfo>
  readonly serverIp: string
  readonly serverPort: number
}

/** Members are told apart by their HTTP endpoint, as the reference keys them. */
export const memberKey = (m: MemberInfo): string => `${m.internalHttpEndPointIp}:${m.internalHttpEndPointPort}`
