/**
 * The Subscriptions service over a real single-node store on a MemoryDisk, on the test clock, driven command
 * by command and checked against a `GroupModel` per group (serviceModel.ts). Time moves one service tick at a
 * time (a SimClock moved timer by timer), so the model knows which messages each tick timed out; after every command the fibers settle (the
 * store's writes, the groups' reads, checkpoints and parks all land) and the harness compares what the store
 * and the service show with the model: the parked stream's links, the checkpoint, the parked and outstanding
 * counts, and how far everything is finished. A restart closes the store and the service (gracefully, or after
 * a power loss of the disk) and opens them again on the same disk.
 */
import { Clock, Effect, Exit, Fiber, Scope } from "effect"
import { MemoryDisk, Prng, SimClock } from "@vellum/platform"
import { ClusterStatus } from "@vellum/cluster"
import { ExpectedVersion, make as makeEventStore, SystemLinkAccess, type EventStoreService } from "@vellum/storage"
import type { GroupSettings } from "../src/config/GroupSettings.js"
import type { NackAction } from "../src/group/types.js"
import { groupKey, parkedStream } from "../src/persisted/streamNames.js"
import { eventNumberText, loadCheckpoint } from "../src/service/groupStreams.js"
import { makeSubscriptions } from "../src/service/makeSubscriptions.js"
import type { SubscribedMessage, SubscriptionsService } from "../src/service/Subscriptions.js"
import { singleNode, storageConfig } from "./serviceFixtures.js"
import { GroupModel, ModelViolation, type Link } from "./serviceModel.js"

/** How often the service ticks its groups (deadlines, checkpoints by time, replay truncation). */
export const TickMillis = 100

export type RestartKind = "clean" | "strictCrash" | "randomCrash" | "service"

const fail = (message: string): never => {
  throw new ModelViolation(message)
}

const same = <A>(actual: A, expected: A, what: string): void => {
  if (JSON.stringify(actual) !== JSON.stringify(expected))
    fail(`${what}: service ${JSON.stringify(actual)}, model ${JSON.stringify(expected)}`)
}

interface Node {
  readonly scope: Scope.CloseableScope
  readonly store: EventStoreService
  readonly subs: SubscriptionsService
  /** When its service started: it ticks every TickMillis from here. */
  readonly startedAt: number
}

export class ServiceHarness {
  readonly disk = new MemoryDisk()
  readonly streams = new Map<string, Array<string>>()
  readonly groups = new Map<string, GroupModel>()
  /** Every group model of the history, deleted ones too (for the figures). */
  readonly models: Array<GroupModel> = []
  readonly seen = { restarts: 0, crashes: 0, longPolls: 0, longPollAnswered: 0, updates: 0, deletes: 0 }
  private node!: Node
  private ids = 0
  private readonly prng: Prng

  private constructor(
    seed: number,
    private readonly clock: SimClock
  ) {
    this.prng = new Prng(seed)
  }

  /** A harness whose node runs on `clock` (the caller runs everything with it as Effect's clock). */
  static open = (seed: number, clock: SimClock): Effect.Effect<ServiceHarness> =>
    Effect.gen(function* () {
      const harness = new ServiceHarness(seed, clock)
      yield* harness.boot
      return harness
    })

  private get subs(): SubscriptionsService {
    return this.node.subs
  }

  private boot = Effect.gen(this, function* () {
    const scope = yield* Scope.make()
    const store = yield* makeEventStore(storageConfig).pipe(
      Effect.provide(MemoryDisk.layer(this.disk)),
      Scope.extend(scope),
      Effect.orDie
    )
    const cluster = yield* Effect.provide(ClusterStatus, singleNode)
    const startedAt = yield* Clock.currentTimeMillis
    const subs = yield* makeSubscriptions(store, cluster, {
      tickMillis: TickMillis,
      leadershipCheckMillis: 250
    }).pipe(Scope.extend(scope))
    this.node = { scope, store, subs, startedAt }
    yield* this.settle
    if (!subs.isReady()) fail("the service does not lead after it opened")
  })

  /** Closes the node (the end of a history). */
  close: Effect.Effect<void> = Effect.suspend(() => Effect.asVoid(Effect.exit(Scope.close(this.node.scope, Exit.void))))

  /** Lets every fiber run until nothing changes (time stands still). */
  settle = Effect.gen(this, function* () {
    let last = ""
    for (let round = 0; round < 200; round++) {
      for (let i = 0; i < 8; i++) yield* Effect.yieldNow()
      const stats = this.node.store.stats()
      const infos = yield* this.subs.list()
      const now = JSON.stringify([stats.writerPosition, stats.committedPosition, infos.map((i) => [i.status, i.stats])])
      if (now === last) return
      last = now
    }
    fail("the service did not settle")
  })

  // ---- commands ---------------------------------------------------------------------------------------

  create = (stream: string, group: string, settings: GroupSettings) =>
    Effect.gen(this, function* () {
      const key = groupKey(stream, group)
      const result = yield* this.subs.create({ stream, group, settings }, "admin")
      if (this.groups.has(key)) return same(result._tag, "AlreadyExists", `create ${key}`)
      same(result._tag, "Success", `create ${key}`)
      const events = this.streams.get(stream) ?? []
      const startAt = settings.startFrom === -1 ? events.length : 0
      const store = this.node.store
      const checkpoint = yield* Effect.orDie(loadCheckpoint(store, stream, group, eventNumberText))
      // A new group starts at the beginning, or after the end as it stood at its creation.
      same(checkpoint, settings.startFrom === -1 ? startAt - 1 : undefined, `${key} checkpoint at its creation`)
      const parked = yield* Effect.orDie(store.lastEventNumber(parkedStream(stream, group)))
      const model = new GroupModel(stream, group, settings, startAt, checkpoint, Math.max(0, parked + 1))
      model.appended(events, 0)
      this.groups.set(key, model)
      this.models.push(model)
    })

  update = (stream: string, group: string, settings: GroupSettings) =>
    Effect.gen(this, function* () {
      const key = groupKey(stream, group)
      const model = this.groups.get(key)
      const result = yield* this.subs.update({ stream, group, settings }, "admin")
      if (model === undefined) return same(result._tag, "DoesNotExist", `update ${key}`)
      same(result._tag, "Success", `update ${key}`)
      this.seen.updates++
      const finished = model.finishedThrough()
      yield* this.settle
      model.settings = settings
      yield* this.restartedFrom(model, finished)
    })

  delete = (stream: string, group: string) =>
    Effect.gen(this, function* () {
      const key = groupKey(stream, group)
      const result = yield* this.subs.delete(stream, group, "admin")
      if (!this.groups.has(key)) return same(result._tag, "DoesNotExist", `delete ${key}`)
      same(result._tag, "Success", `delete ${key}`)
      this.seen.deletes++
      this.groups.delete(key)
    })

  append = (stream: string, count: number) =>
    Effect.gen(this, function* () {
      const ids = Array.from({ length: count }, () => this.nextId())
      const written = yield* this.node.store
        .append(
          stream,
          ExpectedVersion.Any,
          ids.map((eventId) => ({
            eventId,
            eventType: "thing",
            isJson: true,
            data: Buffer.from("{}"),
            metadata: Buffer.from("")
          }))
        )
        .pipe(Effect.orDie)
      const events = this.streams.get(stream) ?? []
      same(written.firstEventNumber, events.length, `first number appended to ${stream}`)
      events.push(...ids)
      this.streams.set(stream, events)
      for (const model of this.groups.values())
        if (model.stream === stream) model.appended(ids, written.firstEventNumber)
    })

  read = (stream: string, group: string, count: number) =>
    Effect.gen(this, function* () {
      const result = yield* this.subs.readMessages(stream, group, { count, waitMillis: 0 })
      yield* this.takeIn(stream, group, result, count, yield* Clock.currentTimeMillis)
    })

  /**
   * A read that waits up to `waitMillis` for a first message; with `appendCount`, that many events are appended
   * to the stream while it waits. Time moves tick by tick until it is answered.
   */
  longPoll = (stream: string, group: string, count: number, waitMillis: number, appendCount: number) =>
    Effect.gen(this, function* () {
      this.seen.longPolls++
      const start = yield* Clock.currentTimeMillis
      const fiber = yield* Effect.fork(this.subs.readMessages(stream, group, { count, waitMillis }))
      yield* this.settle
      if (fiber.unsafePoll() === null && appendCount > 0) {
        yield* this.append(stream, appendCount)
        yield* this.settle
      }
      while (fiber.unsafePoll() === null) {
        const now = yield* Clock.currentTimeMillis
        if (now >= start + waitMillis) fail(`a long poll of ${waitMillis} ms still waits at ${now - start} ms`)
        yield* this.step(Math.min(this.nextTick(now), start + waitMillis))
      }
      const result = yield* Fiber.join(fiber)
      if (result._tag === "Messages" && result.messages.length > 0) this.seen.longPollAnswered++
      yield* this.takeIn(stream, group, result, count, yield* Clock.currentTimeMillis)
    })

  ack = (stream: string, group: string, picks: ReadonlyArray<number>, all: boolean) =>
    Effect.gen(this, function* () {
      const model = this.groups.get(groupKey(stream, group))
      const ids = all ? (model?.inFlight().map((i) => i.id) ?? []) : this.pickIds(model, picks)
      yield* this.subs.ack(stream, group, ids)
      model?.ack(ids)
    })

  nack = (stream: string, group: string, picks: ReadonlyArray<number>, action: NackAction) =>
    Effect.gen(this, function* () {
      const model = this.groups.get(groupKey(stream, group))
      const ids = this.pickIds(model, picks)
      yield* this.subs.nack(stream, group, ids, action)
      model?.nack(ids, action)
    })

  replayParked = (stream: string, group: string, stopAfter: number | undefined) =>
    Effect.gen(this, function* () {
      const model = this.groups.get(groupKey(stream, group))
      const stopAt = stopAfter === undefined || model === undefined ? undefined : model.truncatedBefore + stopAfter
      const result = yield* this.subs.replayParked(stream, group, stopAt)
      if (model === undefined) return same(result._tag, "DoesNotExist", `replay ${stream}::${group}`)
      same(result._tag, "Success", `replay ${stream}::${group}`)
      model.startReplay(stopAt)
    })

  /** Time passes, one service tick at a time. */
  advance = (millis: number) =>
    Effect.gen(this, function* () {
      const end = (yield* Clock.currentTimeMillis) + millis
      for (let now = yield* Clock.currentTimeMillis; now < end; now = yield* Clock.currentTimeMillis)
        yield* this.step(Math.min(this.nextTick(now), end))
    })

  /**
   * The node restarts: the store and the service close (gracefully, or the disk loses power first) and open
   * again on the same disk; or only the service restarts its groups. Each group resumes after its durable
   * checkpoint; after a graceful stop that is everything finished.
   */
  restart = (kind: RestartKind, yieldsFirst = 0) =>
    Effect.gen(this, function* () {
      this.seen.restarts++
      // Power fails wherever the work in flight has got to: some writes landed, others not.
      if (kind !== "clean" && kind !== "service") for (let i = 0; i < yieldsFirst; i++) yield* Effect.yieldNow()
      const finished = new Map([...this.groups].map(([key, model]) => [key, model.finishedThrough()]))
      if (kind === "service") same((yield* this.subs.restart())._tag, "Success", "restart")
      else {
        if (kind !== "clean") {
          this.seen.crashes++
          this.disk.crash(this.prng, kind === "strictCrash" ? "strict" : "random")
        }
        yield* Effect.exit(Scope.close(this.node.scope, Exit.void))
        yield* this.boot
      }
      yield* this.settle
      for (const [key, model] of this.groups)
        yield* this.restartedFrom(model, kind === "clean" || kind === "service" ? finished.get(key) : undefined)
    })

  /** Consumers read and ack everything while time passes, until the model has nothing unfinished (or gives up). */
  drain = Effect.gen(this, function* () {
    for (let round = 0; round < 500; round++) {
      const unfinished = [...this.groups.values()].filter((m) => m.unfinished().length > 0)
      if (unfinished.length === 0) break
      for (const model of unfinished) {
        yield* this.read(model.stream, model.group, 100)
        yield* this.ack(model.stream, model.group, [], true)
      }
      yield* this.settle
      yield* this.check
      yield* this.advance(TickMillis)
    }
    for (const model of this.groups.values()) {
      const left = model.unfinished()
      if (left.length > 0)
        fail(
          `${model.stream}::${model.group} never finished ${left.map((i) => `#${i.position}${i.copy ? " (replayed)" : ""} ${i.state}`).join(", ")}`
        )
    }
    yield* this.check
  })

  // ---- checks -----------------------------------------------------------------------------------------

  /** After a settle: what the store and the service show agrees with every group's model. */
  check = Effect.gen(this, function* () {
    for (const model of this.groups.values()) {
      yield* this.parksLanded(model)
      const waiting = model.parking()
      if (waiting.length > 0) fail(`${model.stream}::${model.group}: parks not written: ${waiting.map((i) => i.id)}`)
      const store = this.node.store
      const checkpoint = yield* Effect.orDie(loadCheckpoint(store, model.stream, model.group, eventNumberText))
      model.checkpointSeen(checkpoint)
      const info = yield* this.subs.info(model.stream, model.group)
      if (info === undefined) return fail(`${model.stream}::${model.group}: no info`)
      const where = `${model.stream}::${model.group}`
      same(info.stats.lastCheckpoint, checkpoint, `${where} last checkpoint`)
      same(info.parkedMessageCount, model.parkedCount(), `${where} parked message count`)
      same(info.stats.outstandingMessagesCount, model.inFlight().length, `${where} outstanding messages`)
      same(info.stats.finishedThrough ?? model.startAt - 1, model.finishedThrough(), `${where} finished through`)
      same(
        (yield* this.parkedLinks(model, 0)).map((l) => l.id),
        model.links.filter((l) => l.number >= model.truncatedBefore).map((l) => l.id),
        `${where} parked stream`
      )
    }
  })

  // ---- helpers ----------------------------------------------------------------------------------------

  /** The group restarted: the model resumes after the checkpoint the store holds (`finished` after a graceful stop). */
  private restartedFrom = (model: GroupModel, finished: number | undefined) =>
    Effect.gen(this, function* () {
      yield* this.parksLanded(model)
      const store = this.node.store
      const checkpoint = yield* Effect.orDie(loadCheckpoint(store, model.stream, model.group, eventNumberText))
      if (finished !== undefined)
        same(
          checkpoint ?? model.startAt - 1,
          finished,
          `${model.stream}::${model.group} checkpoint after a graceful stop`
        )
      model.restarted(checkpoint)
    })

  /** Moves the clock to `to` (at most the next tick), lets the service work, and tells the models of a tick. */
  private step = (to: number) =>
    Effect.gen(this, function* () {
      const now = yield* Clock.currentTimeMillis
      const isTick = to === this.nextTick(now)
      // Every timer due on the way fires at its own instant, and what it wakes runs before the next.
      for (let due = this.clock.nextDue(); due !== undefined && due <= to; due = this.clock.nextDue()) {
        this.clock.advanceToNext()
        yield* this.settle
      }
      this.clock.advanceTo(to)
      yield* this.settle
      if (!isTick) return
      for (const model of this.groups.values()) {
        model.tick(to)
        yield* this.parksLanded(model)
      }
    })

  private nextTick(now: number): number {
    const since = now - this.node.startedAt
    return this.node.startedAt + (Math.floor(since / TickMillis) + 1) * TickMillis
  }

  private takeIn = (
    stream: string,
    group: string,
    result: Effect.Effect.Success<ReturnType<SubscriptionsService["readMessages"]>>,
    count: number,
    now: number
  ) =>
    Effect.sync(() => {
      const model = this.groups.get(groupKey(stream, group))
      if (model === undefined) return same(result._tag, "DoesNotExist", `read ${stream}::${group}`)
      if (result._tag !== "Messages") return fail(`read ${stream}::${group}: ${result._tag}`)
      if (result.messages.length > count) fail(`read ${count} from ${stream}::${group}, got ${result.messages.length}`)
      const seen = new Set<string>()
      for (const message of result.messages as ReadonlyArray<SubscribedMessage>) {
        if (seen.has(message.event.id)) fail(`${message.event.id} twice in one read`)
        seen.add(message.event.id)
        model.delivered(message.event.id, message.event.position, message.retryCount, now)
      }
    })

  /** Links the parked stream holds from `from` (resolved to the ids of the events they point to). */
  private parkedLinks = (model: GroupModel, from: number) =>
    Effect.gen(this, function* () {
      const links: Array<Link> = []
      for (let next = from; ;) {
        const read = yield* Effect.orDie(
          this.node.store.readStreamForward(parkedStream(model.stream, model.group), next, 100, {
            resolveLinks: SystemLinkAccess
          })
        )
        if (read._tag !== "Success") return links
        for (const resolved of read.events)
          links.push({ number: resolved.link!.eventNumber, id: resolved.event?.eventId ?? "(gone)" })
        if (read.isEndOfStream || read.events.length === 0) return links
        next = read.nextEventNumber
      }
    })

  private parksLanded = (model: GroupModel) =>
    Effect.map(this.parkedLinks(model, model.nextLink), (links) => model.landed(links))

  /** Ids the group has in flight (by pick), now and then one it does not (unknown, or another stream's). */
  private pickIds(model: GroupModel | undefined, picks: ReadonlyArray<number>): Array<string> {
    const held = model?.inFlight().map((i) => i.id) ?? []
    const others = [...this.streams.values()].flat()
    return picks.map((p) => {
      if (held.length > 0 && p % 6 !== 0) return held[p % held.length]!
      if (p % 2 === 0 || others.length === 0) return this.nextId()
      return others[p % others.length]!
    })
  }

  private nextId(): string {
    return `00000000-0000-4000-8000-${String(++this.ids).padStart(12, "0")}`
  }
}
