/**
 * One group at work on the leader: the pure machine (`group/Group.ts`) driven over the store. The runner
 * feeds the machine what it reads, what is appended (its tail), the consumers' pulls, acks and nacks, and the
 * clock; it carries out what the machine asks: reads, checkpoint writes (in order, the latest one winning),
 * park writes (batched; the machine hears of them once durable), and it answers long-poll readers as soon as
 * messages are there.
 *
 * Every change to the machine happens in one synchronous step (`input`), so fibers never see it half-done;
 * the I/O runs in fibers of the runner's own scope, which `stop` closes.
 */
import { Clock, Deferred, Effect, Exit, Option, Scope } from "effect"
import type { EventStoreService, ResolvedEvent } from "@vellum/storage"
import { Group } from "../group/Group.js"
import type { ReadResult } from "../group/buffer.js"
import { after, at, eventNumberOrder, type GroupStart, type ReadFrom } from "../group/positions.js"
import { emptyGroupStats, type GroupEffect, type GroupStats, type NackAction } from "../group/types.js"
import { AllStream } from "../persisted/groupDefinitions.js"
import {
  eventNumberText,
  loadCheckpoint,
  loadParkedExtent,
  logPositionText,
  positionTextOf,
  readParked,
  truncateParked,
  writeCheckpoint,
  writeParked,
  type PositionText,
  type ToPark
} from "./groupStreams.js"
import { sourceOf, subscribedEvent, type Source } from "./sources.js"
import type { GroupInfo, GroupSpec, SubscribedEvent, SubscribedMessage } from "./Subscriptions.js"

/** How long a failed read or write waits before it is tried again. */
export const RetryPauseMillis = 1_000
/** Parked messages read per replay page. */
const ReplayPage = 100

type Machine = Group<number, SubscribedEvent>

interface Waiter {
  readonly count: number
  readonly answer: Deferred.Deferred<ReadonlyArray<SubscribedMessage>>
}

interface PendingTruncation {
  readonly before: number
  readonly ids: Set<string>
}

export interface RunnerDeps {
  /** Reads (this node's copy). */
  readonly store: EventStoreService
  /** Writes: refused once this node no longer leads. */
  readonly writer: EventStoreService
  /** Called when a write found this node no longer leads: the service stops every group. */
  readonly lostLead: Effect.Effect<void>
}

/** Where a group starts: after its checkpoint, else at its configured start (-1: live from the head). */
export const startOf = (spec: GroupSpec, checkpoint: number | undefined): GroupStart<number> => {
  if (checkpoint !== undefined) return after(checkpoint)
  const settings = spec.settings
  if (spec.stream === AllStream) {
    const text = settings.startPosition
    const parsed = text === undefined ? undefined : logPositionText.read(text)
    if (parsed !== undefined) return parsed < 0 ? { _tag: "Live" } : at(parsed)
    return settings.startFrom === -1 ? { _tag: "Live" } : at(0)
  }
  const given = settings.startPosition === undefined ? undefined : eventNumberText.read(settings.startPosition)
  const start = given ?? settings.startFrom
  return start < 0 ? { _tag: "Live" } : at(start)
}

export class GroupRunner {
  private machine: Machine | undefined
  private readonly source: Source
  private readonly text: PositionText
  private waiters: Array<Waiter> = []
  private stopped = false
  // The tail: every event past `tailNext` is reported to the machine, in order.
  private tailNext = 0
  private tailReading = false
  private tailAgain = false
  // Checkpoints: written one at a time; only the latest due position is kept waiting.
  private checkpointDue: number | undefined
  /** The last checkpoint loaded or written (the machine counts one as written once it asks for it). */
  private checkpointWritten: number | undefined
  private checkpointWriting = false
  // Parks: written in batches.
  private parkQueue: Array<ToPark & { readonly id: string }> = []
  private parkWriting = false
  private parkedNext = 0
  private parkedTruncateBefore = 0
  private replay: PendingTruncation | undefined
  private replayReading = false
  // Figures.
  private measuredAt: number | undefined
  private measuredTotal = 0
  private caughtUpAt: number | undefined
  private startedAt = 0

  private constructor(
    readonly spec: GroupSpec,
    private readonly deps: RunnerDeps,
    private readonly scope: Scope.CloseableScope
  ) {
    this.source = sourceOf(deps.store, spec)
    this.text = positionTextOf(spec.stream)
  }

  /** Starts a group: it loads its checkpoint and parked extent in the background, then reads. */
  static start = (spec: GroupSpec, deps: RunnerDeps): Effect.Effect<GroupRunner> =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const runner = new GroupRunner(spec, deps, scope)
      runner.startedAt = yield* Clock.currentTimeMillis
      yield* runner.fork(runner.load)
      return runner
    })

  /** The stream a commit must touch to concern this group (undefined: every commit). */
  get sourceStream(): string | undefined {
    return this.source.stream
  }

  get isLoaded(): boolean {
    return this.machine !== undefined
  }

  /**
   * Stops the group: waiting readers get nothing, I/O in flight is interrupted. With `flush`, everything
   * finished since the last checkpoint is checkpointed first (a graceful stop redelivers less).
   */
  stop = (flush: boolean): Effect.Effect<void> =>
    Effect.gen(this, function* () {
      if (this.stopped) return
      this.stopped = true
      for (const waiter of this.waiters) Deferred.unsafeDone(waiter.answer, Exit.succeed([]))
      this.waiters = []
      // I/O in flight ends first. An interrupted write may still land, but before anything written after it.
      yield* Scope.close(this.scope, Exit.void)
      const machine = this.machine
      if (!flush || machine === undefined) return
      const finished = machine.stats().finishedThrough
      const written = this.checkpointWritten
      if (finished !== undefined && (written === undefined || finished > written))
        yield* Effect.ignore(writeCheckpoint(this.deps.writer, this.spec.stream, this.spec.group, this.text, finished))
    })

  // ---- consumers --------------------------------------------------------------------------------------

  /** Up to `count` messages; with `waitMillis`, waits that long for a first one when none is there. */
  readMessages = (count: number, waitMillis: number): Effect.Effect<ReadonlyArray<SubscribedMessage>> =>
    Effect.gen(this, function* () {
      if (this.stopped) return []
      const now = yield* Clock.currentTimeMillis
      const machine = this.machine
      if (machine !== undefined && this.waiters.length === 0) {
        const pulled = machine.pull(count, now)
        yield* this.dispatch(pulled.effects)
        if (pulled.messages.length > 0 || waitMillis <= 0) return pulled.messages
      } else if (waitMillis <= 0) return []
      const waiter: Waiter = { count, answer: yield* Deferred.make<ReadonlyArray<SubscribedMessage>>() }
      this.waiters.push(waiter)
      const answered = yield* Deferred.await(waiter.answer).pipe(
        Effect.timeoutTo({ duration: waitMillis, onTimeout: () => Option.none(), onSuccess: Option.some }),
        Effect.onInterrupt(() => Effect.sync(() => this.dropWaiter(waiter)))
      )
      if (Option.isSome(answered)) return answered.value
      // Answered just as the wait ended: the messages are this reader's.
      const late = yield* Deferred.poll(waiter.answer)
      if (Option.isSome(late)) return yield* late.value
      this.dropWaiter(waiter)
      return []
    })

  ack = (ids: ReadonlyArray<string>): Effect.Effect<void> => this.input((m, now) => m.ack(ids, now))

  nack = (ids: ReadonlyArray<string>, action: NackAction): Effect.Effect<void> =>
    this.input((m, now) => m.nack(ids, action, now))

  /** The clock: deadlines, due checkpoints, and a finished replay's truncation. */
  tick: Effect.Effect<void> = Effect.gen(this, function* () {
    yield* this.input((m, now) => m.tick(now))
    const machine = this.machine
    if (machine === undefined) return
    const stats = machine.stats()
    const now = yield* Clock.currentTimeMillis
    if (this.isCaughtUp(stats)) this.caughtUpAt = now
    const replay = this.replay
    if (replay !== undefined && !this.replayReading) {
      const held = machine.heldIds()
      for (const id of replay.ids) if (!held.has(id)) replay.ids.delete(id)
      if (replay.ids.size === 0) {
        this.replay = undefined
        // Finished: no later replay reads them again, even before the truncation lands.
        if (replay.before > this.parkedTruncateBefore) {
          this.parkedTruncateBefore = replay.before
          yield* this.fork(this.truncateReplayed(replay.before))
        }
      }
    }
  })

  /** A commit touched the source: read what was appended. */
  onCommit = (): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (this.stopped || this.machine === undefined) return Effect.void
      if (this.tailReading) {
        this.tailAgain = true
        return Effect.void
      }
      this.tailReading = true
      return this.fork(this.followTail)
    })

  /** Hands the parked messages out again (those before `stopAt`); false when a replay is under way. */
  replayParked = (stopAt: number | undefined): Effect.Effect<boolean> =>
    Effect.suspend(() => {
      const machine = this.machine
      if (machine === undefined || this.replay !== undefined || this.replayReading || !machine.startReplay())
        return Effect.succeed(false)
      this.replayReading = true
      return Effect.as(this.fork(this.readReplay(stopAt)), true)
    })

  // ---- figures ----------------------------------------------------------------------------------------

  info = (): Effect.Effect<GroupInfo> =>
    Effect.gen(this, function* () {
      const now = yield* Clock.currentTimeMillis
      const stats = this.machine?.stats() ?? emptyGroupStats
      const since = this.measuredAt ?? this.startedAt
      const count = stats.totalItemsProcessed - this.measuredTotal
      const seconds = (now - since) / 1000
      this.measuredAt = now
      this.measuredTotal = stats.totalItemsProcessed
      const lastKnown = stats.lastKnownPosition
      const processed = stats.lastProcessedPosition
      const behind = lastKnown === undefined ? 0 : lastKnown - (processed ?? this.startPosition() - 1)
      return {
        stream: this.spec.stream,
        group: this.spec.group,
        settings: this.spec.settings,
        filter: this.spec.filter,
        status: this.machine === undefined ? ["NotReady"] : stats.status,
        stats,
        parkedMessageCount: this.parkedNext - this.parkedTruncateBefore,
        averageItemsPerSecond: seconds > 0 ? Math.round((count / seconds) * 100) / 100 : 0,
        countSinceLastMeasurement: count,
        lag: {
          events: Math.max(0, behind),
          millis: this.isCaughtUp(stats) ? 0 : now - (this.caughtUpAt ?? this.startedAt)
        }
      }
    })

  private startPosition(): number {
    const start = startOf(this.spec, undefined)
    return start._tag === "At" ? start.position : 0
  }

  private isCaughtUp(stats: GroupStats<number>): boolean {
    const known = stats.lastKnownPosition
    return known === undefined || (stats.finishedThrough !== undefined && stats.finishedThrough >= known)
  }

  // ---- the machine ------------------------------------------------------------------------------------

  /** One change to the machine and what it asks for; then waiting readers are served. */
  private input = (change: (machine: Machine, now: number) => Array<GroupEffect<number, SubscribedEvent>>) =>
    Effect.gen(this, function* () {
      const machine = this.machine
      if (machine === undefined || this.stopped) return
      const now = yield* Clock.currentTimeMillis
      yield* this.dispatch(change(machine, now))
      yield* this.serveWaiters(machine, now)
    })

  private serveWaiters = (machine: Machine, now: number) =>
    Effect.gen(this, function* () {
      while (this.waiters.length > 0) {
        const waiter = this.waiters[0]!
        const pulled = machine.pull(waiter.count, now)
        if (pulled.messages.length === 0) {
          yield* this.dispatch(pulled.effects)
          return
        }
        this.waiters.shift()
        Deferred.unsafeDone(waiter.answer, Exit.succeed(pulled.messages))
        yield* this.dispatch(pulled.effects)
      }
    })

  private dropWaiter(waiter: Waiter): void {
    this.waiters = this.waiters.filter((w) => w !== waiter)
  }

  private dispatch = (effects: ReadonlyArray<GroupEffect<number, SubscribedEvent>>): Effect.Effect<void> =>
    Effect.forEach(
      effects,
      (effect) => {
        switch (effect._tag) {
          case "Read":
            return this.fork(this.readSource(effect.from, effect.count))
          case "WriteCheckpoint":
            this.checkpointDue = effect.position
            if (this.checkpointWriting) return Effect.void
            this.checkpointWriting = true
            return this.fork(this.writeCheckpoints)
          case "Park":
            this.parkQueue.push({
              id: effect.event.id,
              resolved: effect.event.resolved,
              position: effect.event.position,
              reason: effect.reason
            })
            if (this.parkWriting) return Effect.void
            this.parkWriting = true
            return this.fork(this.writeParks)
          // HTTP readers are served by pulls, never as connections; a Stop nack has nothing to stop.
          case "Deliver":
          case "StopRequested":
            return Effect.void
        }
      },
      { discard: true }
    )

  private fork = (effect: Effect.Effect<void>): Effect.Effect<void> =>
    this.stopped ? Effect.void : Effect.asVoid(Effect.forkIn(effect, this.scope))

  // ---- I/O --------------------------------------------------------------------------------------------

  private load = Effect.gen(this, function* () {
    const spec = this.spec
    const loaded = yield* Effect.all({
      checkpoint: loadCheckpoint(this.deps.store, spec.stream, spec.group, this.text),
      parked: loadParkedExtent(this.deps.store, spec.stream, spec.group),
      // Taken before the first read: the tail reports everything from here, the reads what lies before.
      headNext: this.source.headNext
    }).pipe(this.retried("load"))
    this.parkedNext = loaded.parked.next
    this.parkedTruncateBefore = loaded.parked.truncateBefore
    this.tailNext = loaded.headNext
    this.checkpointWritten = loaded.checkpoint
    const machine = new Group<number, SubscribedEvent>(
      spec.settings,
      eventNumberOrder,
      startOf(spec, loaded.checkpoint)
    )
    this.machine = machine
    const now = yield* Clock.currentTimeMillis
    yield* this.dispatch(machine.start(now))
    yield* this.serveWaiters(machine, now)
    // Anything appended while loading.
    yield* this.onCommit()
  })

  private readSource = (from: ReadFrom<number>, count: number) =>
    Effect.gen(this, function* () {
      const result: ReadResult<number, SubscribedEvent> = yield* this.source
        .read(from, count)
        .pipe(this.retried("read"))
      yield* this.input((m, now) => m.readCompleted(result, now))
    })

  private followTail: Effect.Effect<void> = Effect.gen(this, function* () {
    while (!this.stopped) {
      this.tailAgain = false
      let isEnd = false
      while (!isEnd && !this.stopped) {
        const page = yield* this.source.tail(this.tailNext).pipe(this.retried("tail read"))
        this.tailNext = page.next
        isEnd = page.isEnd
        // A page at a time, so a waiting reader gets what arrived together.
        if (page.events.length > 0) yield* this.input((m, now) => page.events.flatMap((e) => m.appended(e, now)))
      }
      if (!this.tailAgain) break
    }
    this.tailReading = false
  })

  private writeCheckpoints: Effect.Effect<void> = Effect.gen(this, function* () {
    while (this.checkpointDue !== undefined && !this.stopped) {
      const position = this.checkpointDue
      this.checkpointDue = undefined
      const written = yield* Effect.either(
        writeCheckpoint(this.deps.writer, this.spec.stream, this.spec.group, this.text, position)
      )
      if (written._tag === "Left") {
        if (written.left._tag === "NotLeader") return yield* this.deps.lostLead
        yield* Effect.logWarning(`subscription ${this.name}: checkpoint not written: ${written.left.message}`)
        // The next due checkpoint covers it; keep this one unless a later one is waiting.
        this.checkpointDue ??= position
        yield* Effect.sleep(RetryPauseMillis)
      } else this.checkpointWritten = position
    }
    this.checkpointWriting = false
  })

  private writeParks: Effect.Effect<void> = Effect.gen(this, function* () {
    while (this.parkQueue.length > 0 && !this.stopped) {
      const batch = this.parkQueue
      this.parkQueue = []
      const now = yield* Clock.currentTimeMillis
      const written = yield* Effect.either(writeParked(this.deps.writer, this.spec.stream, this.spec.group, batch, now))
      if (written._tag === "Left") {
        if (written.left._tag === "NotLeader") return yield* this.deps.lostLead
        yield* Effect.logWarning(`subscription ${this.name}: park not written: ${written.left.message}`)
        this.parkQueue = [...batch, ...this.parkQueue]
        yield* Effect.sleep(RetryPauseMillis)
        continue
      }
      this.parkedNext = Math.max(this.parkedNext, written.right.lastEventNumber + 1)
      yield* this.input((m, at) =>
        m.parked(
          batch.map((p) => p.id),
          at
        )
      )
    }
    this.parkWriting = false
  })

  private readReplay = (stopAt: number | undefined) =>
    Effect.gen(this, function* () {
      const spec = this.spec
      const ids = new Set<string>()
      let next = this.parkedTruncateBefore
      let before = next
      const end = stopAt ?? Number.MAX_SAFE_INTEGER
      let done = next >= end
      // Nothing before stopAt: the machine still hears that the replay ended.
      if (done) yield* this.input((m, now) => m.replayed([], true, now))
      while (!done && !this.stopped) {
        const page = yield* readParked(this.deps.store, spec.stream, spec.group, next, ReplayPage).pipe(
          this.retried("parked read")
        )
        const events: Array<SubscribedEvent> = []
        page.events.forEach((resolved, i) => {
          const number = page.numbers[i]!
          if (number >= end) return
          before = number + 1
          const target = resolved.event
          if (target === undefined) return
          const event = subscribedEvent(
            { event: target, link: undefined } satisfies ResolvedEvent,
            target.eventNumber,
            false
          )
          ids.add(event.id)
          events.push(event)
        })
        next = page.next
        done = page.isEnd || next >= end || page.events.length === 0
        yield* this.input((m, now) => m.replayed(events, done, now))
      }
      this.replayReading = false
      // Truncated once every replayed message is finished: a crash before then replays them again.
      this.replay = { before, ids }
    })

  private truncateReplayed = (before: number) =>
    truncateParked(this.deps.writer, this.spec.stream, this.spec.group, before).pipe(this.retried("truncate"))

  private get name(): string {
    return `${this.spec.stream}::${this.spec.group}`
  }

  /** Retries a failed read or write after a pause, for as long as the group runs. */
  private retried =
    (what: string) =>
    <A, E extends { readonly message: string }>(effect: Effect.Effect<A, E>): Effect.Effect<A> =>
      Effect.catchAll(effect, (e) =>
        Effect.logWarning(`subscription ${this.name}: ${what} failed, retrying: ${e.message}`).pipe(
          Effect.zipRight(Effect.sleep(RetryPauseMillis)),
          Effect.zipRight(Effect.suspend(() => this.retried(what)(effect)))
        )
      )
}
