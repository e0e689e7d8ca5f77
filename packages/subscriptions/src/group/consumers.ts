import { streamHash64 } from "@vellum/storage"
import type { ConsumerStrategy } from "../config/GroupSettings.js"
import type { GroupEvent } from "./types.js"

/** Where a strategy sends one message: to a consumer, nowhere yet (another message may still go), or nowhere. */
export type Placement = { readonly _tag: "Sent"; readonly consumer: string } | "Skipped" | "NoMoreCapacity"

/**
 * A consumer strategy: which waiting consumer gets a message. Consumers are named by the driver (a long-poll
 * request, a connection); `hasRoom` says whether one can take another message now.
 */
export interface Strategy {
  add(consumer: string): void
  remove(consumer: string): void
  place(event: GroupEvent<unknown>, hasRoom: (consumer: string) => boolean): Placement
  /** Whether `consumer`, pulling for itself, may take this message (a pinned message belongs to its consumer). */
  mayTake(consumer: string, event: GroupEvent<unknown>): boolean
}

/** Consumers in turn: each message goes to the next consumer with room, and the turn moves on. */
class RoundRobin implements Strategy {
  protected readonly queue: Array<string> = []
  add(consumer: string): void {
    this.queue.push(consumer)
  }
  remove(consumer: string): void {
    const i = this.queue.indexOf(consumer)
    if (i >= 0) this.queue.splice(i, 1)
  }
  place(_event: GroupEvent<unknown>, hasRoom: (consumer: string) => boolean): Placement {
    for (let i = 0; i < this.queue.length; i++) {
      const consumer = this.queue.shift()!
      this.queue.push(consumer)
      if (hasRoom(consumer)) return { _tag: "Sent", consumer }
    }
    return "NoMoreCapacity"
  }
  mayTake(): boolean {
    return true
  }
}

/** One consumer takes everything while it has room; the next one only when it is full. */
class DispatchToSingle extends RoundRobin {
  override place(_event: GroupEvent<unknown>, hasRoom: (consumer: string) => boolean): Placement {
    for (let i = 0; i < this.queue.length; i++) {
      const consumer = this.queue[0]!
      if (hasRoom(consumer)) return { _tag: "Sent", consumer }
      this.queue.push(this.queue.shift()!)
    }
    return "NoMoreCapacity"
  }
}

const bucketCount = 1024

/**
 * Messages of one key always go to the same consumer while it stays: keys hash into buckets, a bucket is
 * given to the consumer holding fewest when first needed, and a new consumer takes over buckets from those
 * holding more than their share. A message whose consumer is full waits (Skipped) so that its key's order holds.
 */
class Pinned implements Strategy {
  private readonly owners: Array<string | undefined> = new Array<string | undefined>(bucketCount).fill(undefined)
  private readonly held = new Map<string, number>()

  constructor(private readonly keyOf: (event: GroupEvent<unknown>) => string) {}

  add(consumer: string): void {
    this.held.set(consumer, 0)
    let assigned = 0
    for (const n of this.held.values()) assigned += n
    const share = Math.ceil(assigned / this.held.size)
    for (let b = 0; b < bucketCount; b++) {
      const owner = this.owners[b]
      if (owner !== undefined && owner !== consumer && this.held.get(owner)! > share) this.assign(b, consumer)
    }
  }
  remove(consumer: string): void {
    if (!this.held.delete(consumer)) return
    for (let b = 0; b < bucketCount; b++) if (this.owners[b] === consumer) this.owners[b] = undefined
  }
  place(event: GroupEvent<unknown>, hasRoom: (consumer: string) => boolean): Placement {
    if (![...this.held.keys()].some(hasRoom)) return "NoMoreCapacity"
    const owner = this.ownerOf(this.bucketOf(event))
    return hasRoom(owner) ? { _tag: "Sent", consumer: owner } : "Skipped"
  }
  mayTake(consumer: string, event: GroupEvent<unknown>): boolean {
    const b = this.bucketOf(event)
    if (this.owners[b] === undefined && this.held.has(consumer)) this.assign(b, consumer)
    return this.owners[b] === undefined || this.owners[b] === consumer
  }

  private bucketOf(event: GroupEvent<unknown>): number {
    return streamHash64(this.keyOf(event)).lo % bucketCount
  }
  private ownerOf(bucket: number): string {
    const owner = this.owners[bucket]
    if (owner !== undefined) return owner
    let fewest: string | undefined
    for (const [consumer, n] of this.held) if (fewest === undefined || n < this.held.get(fewest)!) fewest = consumer
    this.assign(bucket, fewest!)
    return fewest!
  }
  private assign(bucket: number, consumer: string): void {
    const previous = this.owners[bucket]
    if (previous !== undefined) this.held.set(previous, this.held.get(previous)! - 1)
    this.owners[bucket] = consumer
    this.held.set(consumer, this.held.get(consumer)! + 1)
  }
}

export const makeStrategy = (name: ConsumerStrategy): Strategy => {
  switch (name) {
    case "RoundRobin":
      return new RoundRobin()
    case "DispatchToSingle":
      return new DispatchToSingle()
    case "Pinned":
      return new Pinned((e) => e.pinStream)
    case "PinnedByCorrelation":
      return new Pinned((e) => e.correlationId ?? e.pinStream)
  }
}
