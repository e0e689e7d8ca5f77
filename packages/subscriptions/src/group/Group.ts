import type { GroupSettings } from "../config/GroupSettings.js"
import { type ReadResult, StreamBuffer, type Waiting } from "./buffer.js"
import { CheckpointTracker } from "./checkpoints.js"
import { makeStrategy, type Strategy } from "./consumers.js"
import type { GroupStart, PositionOrder } from "./positions.js"
import type { Delivery, GroupEffect, GroupEvent, GroupStats, GroupStatusFlag, NackAction } from "./types.js"

export interface Pulled<P, E> {
  readonly messages: ReadonlyArray<Delivery<E>>
  readonly effects: ReadonlyArray<GroupEffect<P, E>>
}

interface InFlight<E> {
  readonly message: Waiting<E>
  readonly expiresAt: number
  readonly consumer: string | undefined
}

interface Consumer {
  readonly maxInFlight: number
  inFlight: number
  processed: number
}

/**
 * One persistent subscription group's delivery, as a deterministic machine with no I/O: the driver feeds it
 * what it read, what was appended, what consumers pulled, acked and nacked, and the time (ms); it answers
 * with effects (read more, write a checkpoint, park an event, deliver to a waiting consumer).
 *
 * A message is handed out with a deadline. Acked or skipped, it is finished; nacked with Retry or past its
 * deadline it goes back to be handed out again with its retry count raised, unless it has already been
 * retried `maxRetryCount` times: then it is parked, and finished once the driver says the park is durable.
 * Checkpoints cover only finished events, so a restart from the last one loses nothing.
 */
export class Group<P, E extends GroupEvent<P>> {
  private readonly source: StreamBuffer<P, E>
  private readonly checkpoints: CheckpointTracker<P>
  private readonly strategy: Strategy
  private readonly inFlight = new Map<string, InFlight<E>>()
  private readonly parking = new Map<string, Waiting<E>>()
  private readonly consumers = new Map<string, Consumer>()
  private effects: Array<GroupEffect<P, E>> = []
  private readOutstanding = false
  private replaying = false
  private processed = 0
  private parkedCount = 0
  private lastProcessed: P | undefined
  private lastKnown: P | undefined
  /** The latest time seen: deadlines count from it, so they grow in hand-out order even if a clock steps back. */
  private latest = Number.NEGATIVE_INFINITY
  private lastDeliveryAt: number | undefined
  private lastAckAt: number | undefined

  constructor(
    private readonly settings: GroupSettings,
    private readonly order: PositionOrder<P>,
    start: GroupStart<P>
  ) {
    this.checkpoints = new CheckpointTracker(order, settings, start._tag === "After" ? start.position : undefined)
    this.source = new StreamBuffer(
      order,
      settings.bufferSize,
      settings.liveBufferSize,
      start,
      (event) => this.taken(event),
      (through, count) => this.checkpoints.passed(through, count)
    )
    this.strategy = makeStrategy(settings.namedConsumerStrategy)
  }

  /** Begin: the first read, unless the group starts live. */
  start(now: number): Array<GroupEffect<P, E>> {
    return this.settle(now, false)
  }

  readCompleted(result: ReadResult<P, E>, now: number): Array<GroupEffect<P, E>> {
    this.readOutstanding = false
    for (const event of result.events) this.know(event.position)
    if (result.passed !== undefined) this.know(result.passed.through)
    this.source.readCompleted(result)
    return this.settle(now, false)
  }

  /** An event appended to the source (the driver reports every one, in order, from before the first read). */
  appended(event: E, now: number): Array<GroupEffect<P, E>> {
    this.know(event.position)
    this.source.appended(event)
    return this.settle(now, false)
  }

  /**
   * Up to `count` messages for one request, handed out now (a consumer's pull respects its pinned keys); the
   * room they leave in the buffer may call for a read.
   */
  pull(count: number, now: number, consumer?: string): Pulled<P, E> {
    const messages: Array<Delivery<E>> = []
    this.source.scan((message) => {
      if (messages.length >= count) return "Stop"
      if (consumer !== undefined && !this.strategy.mayTake(consumer, message.event)) return "Left"
      if (!this.handOut(message, now, consumer)) return "Left"
      messages.push({ event: message.event, retryCount: message.retryCount })
      return "Taken"
    })
    return { messages, effects: this.settle(now, false) }
  }

  /**
   * A consumer that waits for up to `maxInFlight` messages at a time (a long-poll request, a connection); it
   * is served at once from what is buffered. "Full" past `maxSubscriberCount` (0: no limit) or for a name in use.
   */
  connect(consumer: string, maxInFlight: number, now: number): Array<GroupEffect<P, E>> | "Full" {
    const max = this.settings.maxSubscriberCount
    if (this.consumers.has(consumer) || (max > 0 && this.consumers.size >= max)) return "Full"
    this.consumers.set(consumer, { maxInFlight, inFlight: 0, processed: 0 })
    this.strategy.add(consumer)
    return this.settle(now, false)
  }

  /**
   * A consumer leaves. A connection that drops (`retryInFlight`) gives its messages back to be retried; a
   * long-poll request that was answered keeps them in flight, to be acked by id.
   */
  disconnect(consumer: string, retryInFlight: boolean, now: number): Array<GroupEffect<P, E>> {
    if (!this.consumers.delete(consumer)) return this.drain()
    this.strategy.remove(consumer)
    const mine = [...this.inFlight.entries()].filter(([, f]) => f.consumer === consumer)
    for (const [id, f] of mine) {
      if (retryInFlight) {
        this.release(id)
        this.retryOrPark(id, f.message)
      } else this.inFlight.set(id, { ...f, consumer: undefined })
    }
    return this.settle(now, false)
  }

  ack(ids: ReadonlyArray<string>, now: number): Array<GroupEffect<P, E>> {
    for (const id of ids) {
      const message = this.release(id)
      if (message === undefined) continue
      this.finish(id, message)
      this.lastAckAt = now
    }
    return this.settle(now, false)
  }

  nack(ids: ReadonlyArray<string>, action: NackAction, now: number): Array<GroupEffect<P, E>> {
    const stopped: Array<string> = []
    for (const id of ids) {
      if (action === "Stop") {
        if (this.inFlight.has(id)) stopped.push(id)
        continue
      }
      const message = this.release(id)
      if (message === undefined) continue
      if (action === "Skip") this.finish(id, message)
      else if (action === "Park") this.park(id, message, "Client explicitly NAK'ed message.")
      else this.retryOrPark(id, message)
    }
    if (stopped.length > 0) this.effects.push({ _tag: "StopRequested", ids: stopped })
    return this.settle(now, false)
  }

  /** The park of these events is durable: they are finished. */
  parked(ids: ReadonlyArray<string>, now: number): Array<GroupEffect<P, E>> {
    for (const id of ids) {
      const message = this.parking.get(id)
      if (message === undefined) continue
      this.parking.delete(id)
      this.parkedCount++
      this.finish(id, message)
    }
    return this.settle(now, false)
  }

  /** Begin replaying the parked stream; false when a replay is already under way. */
  startReplay(): boolean {
    if (this.replaying) return false
    this.replaying = true
    return true
  }

  /** Parked events read back from the parked stream, handed out again after the retries; `done` ends the replay. */
  replayed(events: ReadonlyArray<E>, done: boolean, now: number): Array<GroupEffect<P, E>> {
    for (const event of events) this.source.retry({ event, retryCount: 0, replayed: true })
    if (done) this.replaying = false
    return this.settle(now, false)
  }

  /** The clock: messages past their deadline go back (or are parked), and a checkpoint may be due. */
  tick(now: number): Array<GroupEffect<P, E>> {
    // In-flight messages are held in hand-out order, which is deadline order.
    for (const [id, f] of this.inFlight) {
      if (f.expiresAt > now) break
      this.release(id)
      this.retryOrPark(id, f.message)
    }
    return this.settle(now, true)
  }

  /** The ids the group still holds: in flight, waiting for their park to be durable, or waiting to be retried. */
  heldIds(): Set<string> {
    const ids = new Set<string>([...this.inFlight.keys(), ...this.parking.keys()])
    for (const message of this.source.retries) ids.add(message.event.id)
    return ids
  }

  stats(): GroupStats<P> {
    const flags: Array<[boolean, GroupStatusFlag]> = [
      [!this.source.live, "Behind"],
      [this.readOutstanding, "OutstandingPageRequest"],
      [this.replaying, "ReplayingParkedMessages"],
      [this.source.live, "Live"]
    ]
    const status = flags.filter(([on]) => on).map(([, flag]) => flag)
    return {
      status,
      readBufferCount: this.source.buffer.length,
      liveBufferCount: this.source.liveQueueLength,
      retryBufferCount: this.source.retries.length,
      outstandingMessagesCount: this.inFlight.size + this.parking.size,
      totalItemsProcessed: this.processed,
      lastProcessedPosition: this.lastProcessed,
      lastKnownPosition: this.lastKnown,
      lastCheckpoint: this.checkpoints.lastWritten,
      finishedThrough: this.checkpoints.finished,
      parkedSinceStart: this.parkedCount,
      lastDeliveryAt: this.lastDeliveryAt,
      lastAckAt: this.lastAckAt,
      connections: [...this.consumers].map(([id, c]) => ({
        id,
        inFlight: c.inFlight,
        availableSlots: Math.max(0, c.maxInFlight - c.inFlight),
        totalItemsProcessed: c.processed
      }))
    }
  }

  private taken(event: E): void {
    // The reference skips a second message with an id already in flight; here it is finished at once.
    if (this.checkpoints.has(event.id)) {
      this.source.buffer.pop()
      return
    }
    this.checkpoints.take(event.id, event.position)
  }

  private know(position: P): void {
    if (this.lastKnown === undefined || this.order.compare(position, this.lastKnown) > 0) this.lastKnown = position
  }

  private handOut(message: Waiting<E>, now: number, consumer: string | undefined): boolean {
    const id = message.event.id
    if (this.inFlight.has(id) || this.parking.has(id)) return false
    this.latest = Math.max(this.latest, now)
    this.lastDeliveryAt = now
    this.inFlight.set(id, { message, expiresAt: this.latest + this.settings.messageTimeoutMilliseconds, consumer })
    const c = consumer === undefined ? undefined : this.consumers.get(consumer)
    if (c !== undefined) {
      c.inFlight++
      c.processed++
    }
    this.processed++
    const position = message.event.position
    if (!message.replayed && (this.lastProcessed === undefined || this.order.compare(position, this.lastProcessed) > 0))
      this.lastProcessed = position
    return true
  }

  private release(id: string): Waiting<E> | undefined {
    const f = this.inFlight.get(id)
    if (f === undefined) return undefined
    this.inFlight.delete(id)
    const c = f.consumer === undefined ? undefined : this.consumers.get(f.consumer)
    if (c !== undefined) c.inFlight--
    return f.message
  }

  /** A replayed parked message is outside the source's order: finishing it moves no checkpoint. */
  private finish(id: string, message: Waiting<E>): void {
    if (!message.replayed) this.checkpoints.finish(id)
  }

  private retryOrPark(id: string, message: Waiting<E>): void {
    if (message.retryCount >= this.settings.maxRetryCount)
      this.park(id, message, `Reached retry count of ${this.settings.maxRetryCount}`)
    else this.source.retry({ ...message, retryCount: message.retryCount + 1 })
  }

  private park(id: string, message: Waiting<E>, reason: string): void {
    this.parking.set(id, message)
    this.effects.push({ _tag: "Park", event: message.event, reason })
  }

  /** After every input: hand messages to waiting consumers, write a due checkpoint, read more if there is room. */
  private settle(now: number, isClockTick: boolean): Array<GroupEffect<P, E>> {
    this.dispatch(now)
    const checkpoint = this.checkpoints.due(now, isClockTick)
    if (checkpoint !== undefined) this.effects.push({ _tag: "WriteCheckpoint", position: checkpoint })
    const from = this.source.cursor
    if (!this.readOutstanding && from !== undefined && this.source.canRead(this.settings.readBatchSize)) {
      this.readOutstanding = true
      this.effects.push({ _tag: "Read", from, count: this.settings.readBatchSize })
    }
    return this.drain()
  }

  private dispatch(now: number): void {
    if (this.consumers.size === 0) return
    const sent = new Map<string, Array<Delivery<E>>>()
    const hasRoom = (id: string) => {
      const c = this.consumers.get(id)
      return c !== undefined && c.inFlight < c.maxInFlight
    }
    this.source.scan((message) => {
      const placement = this.strategy.place(message.event, hasRoom)
      if (placement === "NoMoreCapacity") return "Stop"
      if (placement === "Skipped" || !this.handOut(message, now, placement.consumer)) return "Left"
      const list = sent.get(placement.consumer) ?? []
      list.push({ event: message.event, retryCount: message.retryCount })
      sent.set(placement.consumer, list)
      return "Taken"
    })
    for (const [consumer, messages] of sent) this.effects.push({ _tag: "Deliver", consumer, messages })
  }

  private drain(): Array<GroupEffect<P, E>> {
    const out = this.effects
    this.effects = []
    return out
  }
}
