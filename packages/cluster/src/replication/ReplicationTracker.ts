/**
 * The leader's replication checkpoint: the log position up to which a quorum of the voting nodes, the
 * leader among them, holds the log durably. An append is acknowledged to its client only once this
 * checkpoint passes it, and followers index only up to it, so no node ever serves an event a later leader
 * could lose.
 *
 * Inputs: the leader's own flushed position, and each promotable replica's acknowledgement of what it has
 * flushed (read-only replicas never count). A replica's position only grows (a stale or duplicate ack
 * changes nothing), is capped at what the leader has flushed (a replica cannot hold what the leader never
 * sent), and is forgotten when the replica is lost, which may stall the checkpoint but never moves it back.
 */
import { assert } from "@vellum/platform"

export const quorumSize = (clusterSize: number): number => Math.floor(clusterSize / 2) + 1

export class ReplicationTracker {
  private leader = 0
  private readonly replicas = new Map<string, number>()
  private checkpoint = 0

  /** @param clusterSize the voting nodes, the leader included */
  constructor(readonly clusterSize: number) {
    assert(Number.isInteger(clusterSize) && clusterSize >= 1, "ReplicationTracker: a cluster has a voter")
  }

  /** The replication checkpoint; it never goes back. */
  get replicated(): number {
    return this.checkpoint
  }

  /** The leader has flushed its log up to `position`. */
  leaderFlushed(position: number): number {
    assert(position >= this.leader, "ReplicationTracker: the leader's flushed position only grows")
    this.leader = position
    return this.advance()
  }

  /** A replica has flushed up to `position`; ignored unless it is promotable (a voter). */
  replicaAcked(replica: string, position: number, promotable = true): number {
    if (!promotable) return this.checkpoint
    const known = this.replicas.get(replica) ?? 0
    if (position > known) this.replicas.set(replica, position)
    return this.advance()
  }

  /** The replica's connection is gone: its acks count no more until it subscribes again. */
  replicaLost(replica: string): void {
    this.replicas.delete(replica)
  }

  private advance(): number {
    const quorum = quorumSize(this.clusterSize)
    // The leader's flushed position, then each replica's, capped at it; the quorum-th highest is held by a quorum.
    const held = [this.leader, ...[...this.replicas.values()].map((p) => Math.min(p, this.leader))].sort(
      (a, b) => b - a
    )
    const candidate = held.length >= quorum ? held[quorum - 1]! : 0
    if (candidate > this.checkpoint) this.checkpoint = candidate
    return this.checkpoint
  }
}
