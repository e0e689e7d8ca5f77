/**
 * What the clients were told, against what the nodes serve: the rules "no acknowledged append is lost" and
 * "no node serves an event past the committed position", as pure functions of observations.
 *
 * Each client stream has one writer, which sends only fresh event ids, so the stream's true history is the
 * ids of its acknowledged appends in order (plus the appends a reconciliation found written). Every append
 * the cluster acknowledged carries a bound: the acknowledging leader's committed position just after it
 * answered. A correct leader answers only once the write is committed there, so any node whose committed
 * position has reached the bound must serve the write — that is "caught up" — whatever happened since
 * (crashes, failovers, truncations).
 *
 * A view of a stream (its events in order, from a node's store or an HTTP read) must be a prefix of the
 * history, possibly followed by the events of the one write still in doubt on that stream (sent, not
 * answered): a node that serves anything else serves an event that was never committed, or lost one that
 * was. A write in doubt whose events a node served must turn out written when it is reconciled.
 */

export interface AckedAppend {
  readonly stream: string
  /** The first event number the store gave the append. */
  readonly first: number
  readonly eventIds: ReadonlyArray<string>
  /** The acknowledging node's committed position after its answer (undefined: found written later). */
  readonly bound: number | undefined
  /** Which node acknowledged it, for messages. */
  readonly node: string
}

/** One event of a view of a stream: its number and id. */
export interface ServedEvent {
  readonly eventNumber: number
  readonly eventId: string
}

export interface InDoubt {
  readonly eventIds: ReadonlyArray<string>
  /** A node served its events: it must be found written. */
  seen: boolean
}

export class AckLedger {
  private readonly history = new Map<string, Array<string>>()
  private readonly acks = new Map<string, Array<AckedAppend>>()
  private readonly doubts = new Map<string, InDoubt>()
  /** Acknowledged appends recorded. */
  count = 0

  historyOf(stream: string): ReadonlyArray<string> {
    return this.history.get(stream) ?? []
  }

  /** An append the cluster acknowledged (or a reconciliation found written): the stream's history grows. */
  written(ack: AckedAppend): string | undefined {
    const history = this.history.get(ack.stream) ?? []
    if (ack.first !== history.length) {
      return `${ack.stream}: ${ack.node} acknowledged an append at event ${ack.first}, but the stream's history has ${history.length} events`
    }
    history.push(...ack.eventIds)
    this.history.set(ack.stream, history)
    const acks = this.acks.get(ack.stream) ?? []
    acks.push(ack)
    this.acks.set(ack.stream, acks)
    this.count++
    return undefined
  }

  /** A write whose answer never came (timed out, cut off): it may be anywhere until reconciled. */
  doubt(stream: string, eventIds: ReadonlyArray<string>): void {
    this.doubts.set(stream, { eventIds, seen: false })
  }

  /** The write in doubt on `stream` was settled: written (`written` is called too) or not. */
  settle(stream: string, wasWritten: boolean): string | undefined {
    const doubt = this.doubts.get(stream)
    this.doubts.delete(stream)
    if (doubt !== undefined && doubt.seen && !wasWritten) {
      return `${stream}: a node served the events of a write that was never committed (${doubt.eventIds[0]}…)`
    }
    return undefined
  }

  inDoubt(stream: string): InDoubt | undefined {
    return this.doubts.get(stream)
  }

  /**
   * A node's view of `stream`, read when its committed position was `committedBefore` (undefined: not known,
   * as for a node whose position cannot be read): the problem, if any.
   */
  checkServed(
    node: string,
    stream: string,
    events: ReadonlyArray<ServedEvent>,
    committedBefore: number | undefined
  ): string | undefined {
    const history = this.historyOf(stream)
    const doubt = this.doubts.get(stream)
    for (let i = 0; i < events.length; i++) {
      const e = events[i]!
      if (e.eventNumber !== i) return `${node} serves ${stream} with event ${e.eventNumber} at index ${i}`
      if (i < history.length) {
        if (e.eventId !== history[i]) {
          return `${node} serves ${stream}#${i} as ${e.eventId}, but the acknowledged event there is ${history[i]}`
        }
        continue
      }
      const fromDoubt = doubt?.eventIds[i - history.length]
      if (fromDoubt === undefined || fromDoubt !== e.eventId) {
        return `${node} serves ${stream}#${i} (${e.eventId}), which no acknowledged write and no write in doubt holds: served past the committed position`
      }
      if (doubt !== undefined) doubt.seen = true
    }
    if (committedBefore === undefined) return undefined
    for (const ack of this.acks.get(stream) ?? []) {
      if (ack.bound === undefined || ack.bound > committedBefore) continue
      if (events.length < ack.first + ack.eventIds.length) {
        return `${node} lost an acknowledged append: its committed position ${committedBefore} has reached ${ack.bound}, where ${ack.node} acknowledged ${stream}#${ack.first}..${ack.first + ack.eventIds.length - 1}, but it serves ${events.length} events`
      }
    }
    return undefined
  }
}

/**
 * A leader cut off from a quorum must step down within a bound: it cannot commit, and clients that reach it
 * wait for nothing. `observe` is called at every sample with what the run knows of the node: whether it says
 * it leads, whether it runs (a paused node cannot act; its time does not count), and whether it can reach a
 * quorum of voters both ways now.
 */
export class QuorumWatch {
  private readonly cutSince = new Map<string, number>()

  constructor(readonly boundMs: number) {}

  observe(now: number, node: string, leads: boolean, running: boolean, reachesQuorum: boolean): string | undefined {
    if (!leads || !running || reachesQuorum) {
      this.cutSince.delete(node)
      return undefined
    }
    const since = this.cutSince.get(node)
    if (since === undefined) {
      this.cutSince.set(node, now)
      return undefined
    }
    if (now - since > this.boundMs) {
      return `${node} has led without a quorum for ${now - since} ms (bound ${this.boundMs} ms)`
    }
    return undefined
  }

  /** A node that crashed, restarted or paused starts afresh. */
  forget(node: string): void {
    this.cutSince.delete(node)
  }
}
