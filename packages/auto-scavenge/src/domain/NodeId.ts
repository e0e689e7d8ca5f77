/**
 * How auto-scavenge names a member: by its internal HTTP endpoint, as gossip reports it and as the
 * persisted events carry it (`{"address": "...", "port": n}`). A member restarted at another endpoint is
 * another node to auto-scavenge: the old one leaves the cycle and the new one joins it.
 */
export interface NodeId {
  readonly address: string
  readonly port: number
}

/** One text per node, for sets and maps. */
export const nodeKey = (node: NodeId): string => `${node.address}:${node.port}`

export const sameNode = (a: NodeId | undefined, b: NodeId | undefined): boolean =>
  a !== undefined && b !== undefined && a.address === b.address && a.port === b.port

/** The members of `nodes` that `other` lacks, in `nodes`' order. */
export const nodesMissingFrom = (nodes: ReadonlyArray<NodeId>, other: ReadonlyArray<NodeId>): Array<NodeId> => {
  const keys = new Set(other.map(nodeKey))
  return nodes.filter((n) => !keys.has(nodeKey(n)))
}
