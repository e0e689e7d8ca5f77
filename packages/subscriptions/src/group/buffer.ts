import { type GroupStart, isAtOrBeyond, type PositionOrder, type ReadFrom } from "./positions.js"
import type { GroupEvent } from "./types.js"

/** A message waiting to be handed out. Replayed parked messages sit outside the source's order. */
export interface Waiting<E> {
  readonly event: E
  readonly retryCount: number
  readonly replayed: boolean
}

/** What a source read returned. `endOfStream` when it reached the source's end as it stood then. */
export interface ReadResult<P, E> {
  readonly events: ReadonlyArray<E>
  readonly endOfStream: boolean
  /**
   * A filtered read (a `$all` group's filter) examined the source through `through` and passed over `count`
   * events that did not match: the cursor and the checkpoint may move past them.
   */
  readonly passed?: { readonly through: P; readonly count: number } | undefined
}

/**
 * The messages a group holds before handing them out, and how it takes events from its source without a
 * gap or a duplicate.
 *
 * Catching up, the group reads batches from `cursor`; events appended meanwhile wait in a bounded live queue
 * (the oldest dropped when it is full: reading will reach them). The group goes live when a read reaches
 * the first queued event (the rest of the queue follows it) or reaches the end with nothing queued. Live,
 * appended events go straight to the buffer; when the buffer is full the group falls behind and reads again
 * from its cursor. An event at or before the cursor was already taken and is ignored, so the driver may
 * report an event both by a read and as appended.
 */
export class StreamBuffer<P, E extends GroupEvent<P>> {
  readonly buffer: Array<Waiting<E>> = []
  readonly retries: Array<Waiting<E>> = []
  private liveQueue: Array<E> = []
  private from: ReadFrom<P> | undefined
  live: boolean

  constructor(
    private readonly order: PositionOrder<P>,
    private readonly bufferSize: number,
    private readonly liveBufferSize: number,
    start: GroupStart<P>,
    /** Called for each event taken from the source, in position order. */
    private readonly onTake: (event: E) => void,
    /** Called when a filtered read passed over events up to a position. */
    private readonly onPass: (through: P, count: number) => void
  ) {
    this.live = start._tag === "Live"
    this.from = start._tag === "Live" ? undefined : start
  }

  /** Where the next read starts; undefined when a live start has taken nothing yet. */
  get cursor(): ReadFrom<P> | undefined {
    return this.from
  }

  get liveQueueLength(): number {
    return this.liveQueue.length
  }

  /** Whether a read of `count` more events fits (the reference keeps more than a batch of room free). */
  canRead(count: number): boolean {
    return !this.live && this.from !== undefined && this.bufferSize - this.buffer.length - this.retries.length > count
  }

  appended(event: E): void {
    if (!this.isNew(event)) return
    if (this.live) {
      if (this.buffer.length < this.bufferSize) return this.take(event)
      this.live = false
    }
    this.liveQueue.push(event)
    if (this.liveQueue.length > this.liveBufferSize) this.liveQueue.shift()
  }

  readCompleted(result: ReadResult<P, E>): void {
    if (this.live) return
    for (const event of result.events) if (this.isNew(event)) this.take(event)
    const passed = result.passed
    if (passed !== undefined && this.isNew({ position: passed.through })) {
      this.from = { _tag: "After", position: passed.through }
      this.onPass(passed.through, passed.count)
    }
    const queued = this.liveQueue.length
    this.liveQueue = this.liveQueue.filter((e) => this.isNew(e))
    if (this.liveQueue.length < queued || (result.endOfStream && this.liveQueue.length === 0)) {
      for (const event of this.liveQueue) this.take(event)
      this.liveQueue = []
      this.live = true
    }
  }

  /** A message to hand out again: in position order among the retries, replayed parked ones last. */
  retry(message: Waiting<E>): void {
    if (message.replayed) {
      this.retries.push(message)
      return
    }
    const position = message.event.position
    const i = this.retries.findIndex((m) => m.replayed || this.order.compare(position, m.event.position) < 0)
    this.retries.splice(i < 0 ? this.retries.length : i, 0, message)
  }

  /** Retries first, then the buffer, in order; `take` says whether to hand the message out now. */
  scan(take: (message: Waiting<E>) => "Taken" | "Left" | "Stop"): void {
    if (scanList(this.retries, take)) scanList(this.buffer, take)
  }

  private isNew(event: { readonly position: P }): boolean {
    return this.from === undefined || isAtOrBeyond(this.order, this.from, event.position)
  }

  private take(event: E): void {
    this.from = { _tag: "After", position: event.position }
    this.buffer.push({ event, retryCount: 0, replayed: false })
    this.onTake(event)
  }
}

/**
 * One list of `scan`: the messages taken leave it, the others keep their order. The list is closed up once,
 * after the scan, rather than once per message taken (a pull takes its messages from the front of a buffer
 * of up to `bufferSize`). False when `take` said stop.
 */
const scanList = <E>(list: Array<Waiting<E>>, take: (message: Waiting<E>) => "Taken" | "Left" | "Stop"): boolean => {
  let kept = 0
  let i = 0
  let stopped = false
  for (; i < list.length; i++) {
    const verdict = take(list[i]!)
    if (verdict === "Stop") {
      stopped = true
      break
    }
    if (verdict === "Left") list[kept++] = list[i]!
  }
  if (kept < i) list.splice(kept, i - kept)
  return !stopped
}
