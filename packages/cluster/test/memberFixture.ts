/** A member record for tests: member n lives at 10.0.0.n (internal port 1112, HTTP port 2113). */
import type { MemberInfo } from "../src/index.js"

export const NOW = 1_767_225_600_000

export const member = (n: number, changes: Partial<MemberInfo> = {}): MemberInfo => ({
  instanceId: `00000000-0000-4000-8000-00000000000${n}`,
  timeStamp: NOW,
  state: "Follower",
  isAlive: true,
  internalTcpIp: `10.0.0.${n}`,
  internalTcpPort: 1112,
  internalSecureTcpPort: 0,
  externalTcpIp: `10.0.0.${n}`,
  externalTcpPort: 0,
  externalSecureTcpPort: 0,
  internalHttpEndPointIp: `10.0.0.${n}`,
  internalHttpEndPointPort: 2113,
  httpEndPointIp: `10.0.0.${n}`,
  httpEndPointPort: 2113,
  lastCommitPosition: 100,
  writerCheckpoint: 100,
  chaserCheckpoint: 100,
  epochPosition: 0,
  epochNumber: 1,
  epochId: "00000000-0000-4000-8000-0000000000e1",
  nodePriority: 0,
  isReadOnlyReplica: false,
  esVersion: "0.1.0",
  ...changes
})
