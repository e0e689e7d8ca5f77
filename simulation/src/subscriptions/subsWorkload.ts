/**
 * The persistent subscriptions workload of a single-node seed. Its consumers call the node's
 * `Subscriptions` service in-process — the service the `/subscriptions` HTTP routes call — while the node
 * crashes and restarts under the runner's crash driver (runSeed.ts).
 *
 * Each lifetime: with faults paused, the workload waits for the service to lead, creates the planned groups
 * that do not exist yet, and reads each group's checkpoint from the store (what was durable at the crash).
 * Then, while the clients run: an appender writes to the workload's streams; consumers per group pull
 * batches (some long-polling), and ack, nack (Park, Retry, Skip, Stop) or let messages time out; a manager
 * replays parked messages, updates groups (new settings) and restarts the service now and then. Every copy
 * handed out is checked as it arrives (subsModel.ts). The last lifetime drains: consumers only ack, skip
 * or park until every group has finished its whole source, then the end rules compare the model with the
 * store (sources and parked streams).
 */
import { Effect } from "effect"
import type { Prng } from "@vellum/platform"
import {
  ExpectedVersion,
  originalEvent,
  SystemLinkAccess,
  type EventStoreService,
  type ProposedEvent,
  type ReadFailure
} from "@vellum/storage"
import {
  checkpointStream,
  decodeCheckpoint,
  groupKey,
  parkedStream,
  type GroupSettings,
  type NackAction,
  type SubscriptionsService
} from "@vellum/subscriptions"
import type { Coverage, CoverageMark } from "../coverage.js"
import { checkEnd, GroupModel, mayPark, type Action, type Copy, type SourceEvent } from "./subsModel.js"
import { drawPlan, drawSettings, SubsStreamPrefix, type PlannedGroup, type SubsPlan } from "./subsPlan.js"

export interface SubsHooks {
  readonly coverage: Coverage
  readonly trace: (line: string) => void
  readonly fail: (message: string) => void
  readonly failed: () => boolean
}

interface GroupState {
  readonly plan: PlannedGroup
  readonly key: string
  readonly model: GroupModel
  /** The settings the node runs the group with, as its `info` last showed them. */
  settings: GroupSettings
  created: boolean
  /** Consumers inside a pull-and-answer round. */
  busy: number
  /** An update or restart is under way: consumers wait outside their rounds. */
  updating: boolean
  readonly consumerPrngs: ReadonlyArray<Prng>
}

/** Events the appender writes over a seed, at most (the drain must finish them all). */
const MaxEvents = 300
/** How long the last lifetime may take to finish every group's source. */
const DrainLimitMillis = 30 * 60_000

const hex = (n: number, width: number) => (n >>> 0).toString(16).padStart(width, "0")
const uuid = (p: Prng) =>
  `${hex(p.nextU32(), 8)}-${hex(p.nextU32() & 0xffff, 4)}-4${hex(p.nextU32() & 0xfff, 3)}-${hex((p.nextU32() & 0x3fff) | 0x8000, 4)}-${hex(p.nextU32() & 0xffff, 4)}${hex(p.nextU32(), 8)}`

const answerMarks = {
  ack: "subs.answer.ack",
  skip: "subs.answer.skip",
  park: "subs.answer.park",
  retry: "subs.answer.retry",
  stop: "subs.answer.stop",
  abandon: "subs.answer.abandon"
} as const satisfies Record<Action, CoverageMark>

const nackOf: Partial<Record<Action, NackAction>> = { skip: "Skip", park: "Park", retry: "Retry", stop: "Stop" }

export class SubscriptionsWorkload {
  readonly plan: SubsPlan
  private readonly groups: ReadonlyArray<GroupState>
  private readonly appendPrng: Prng
  private readonly managerPrng: Prng
  private readonly lifePrng: Prng
  private life = 0
  private appended = 0
  /** Copies handed out over the seed. */
  copies = 0

  constructor(
    prng: Prng,
    private readonly hooks: SubsHooks
  ) {
    this.plan = drawPlan(prng.fork("plan"))
    this.appendPrng = prng.fork("append")
    this.managerPrng = prng.fork("manager")
    this.lifePrng = prng.fork("lifetimes")
    this.groups = this.plan.groups.map((plan) => {
      const key = groupKey(plan.stream, plan.group)
      return {
        plan,
        key,
        model: new GroupModel(key, plan.settings.maxRetryCount),
        settings: plan.settings,
        created: false,
        busy: 0,
        updating: false,
        consumerPrngs: Array.from({ length: plan.consumers }, (_, i) => prng.fork(`consumer-${key}-${i}`))
      }
    })
  }

  /**
   * A lifetime's start, with faults paused: the service leads, the groups exist, and each group's durable
   * checkpoint is known. False when the service did not become ready (the seed has failed then).
   */
  begin(store: EventStoreService, subs: SubscriptionsService, life: number): Effect.Effect<boolean> {
    return Effect.gen(this, function* () {
      this.life = life
      // A crash killed the last lifetime's actors wherever they were.
      for (const g of this.groups) {
        g.busy = 0
        g.updating = false
      }
      for (let waited = 0; !subs.isReady(); waited += 250) {
        if (waited > 120_000) {
          this.hooks.fail("subscriptions: the service did not become ready within 2 minutes of a start")
          return false
        }
        yield* Effect.sleep(250)
      }
      for (const g of this.groups) {
        if (!g.created) {
          const spec = { stream: g.plan.stream, group: g.plan.group, settings: g.plan.settings, filter: g.plan.filter }
          const created = yield* subs.create(spec, "admin")
          this.hooks.trace(`subs create ${g.key} -> ${created._tag}${"reason" in created ? ` ${created.reason}` : ""}`)
          if (created._tag === "Success" || created._tag === "AlreadyExists") {
            g.created = true
            if (created._tag === "Success") this.hooks.coverage.hit("subs.group.created")
          }
        }
        if (!g.created) continue
        const info = yield* subs.info(g.plan.stream, g.plan.group)
        if (info !== undefined) g.settings = info.settings
        const checkpoint = yield* Effect.either(readCheckpoint(store, g.plan.stream, g.plan.group))
        if (checkpoint._tag === "Left") {
          this.hooks.fail(`subscriptions: a checkpoint read failed with faults paused: ${checkpoint.left.message}`)
          return false
        }
        g.model.beginLife(checkpoint.right, g.settings.maxRetryCount)
        if (checkpoint.right !== undefined && life > 0) this.hooks.coverage.hit("subs.resumedFromCheckpoint")
        this.hooks.trace(`subs ${g.key} life ${life} checkpoint ${checkpoint.right ?? "none"}`)
      }
      return true
    })
  }

  /**
   * The workload of one lifetime: for a drawn stretch of simulated time (the lifetime lasts at least that
   * long unless the node crashes first), then every actor ends its round and stops.
   */
  run(store: EventStoreService, subs: SubscriptionsService): Effect.Effect<void> {
    let over = false
    const go = () => !over && !this.hooks.failed()
    const consumers = this.groups.flatMap((g) =>
      g.consumerPrngs.map((prng) => this.consumer(subs, g, prng, "chaos", go))
    )
    const stretch = Effect.sleep(this.lifePrng.int(2_000, 40_000)).pipe(Effect.tap(() => (over = true)))
    return Effect.all([stretch, this.appender(store, go), this.manager(subs, go), ...consumers], {
      concurrency: "unbounded",
      discard: true
    })
  }

  /**
   * The last lifetime: consumers drain every group (ack, skip or park only) until each has finished its
   * whole source with nothing held; then the end rules against the store.
   */
  drain(store: EventStoreService, subs: SubscriptionsService): Effect.Effect<void> {
    return Effect.gen(this, function* () {
      const groups = this.groups.filter((g) => g.created)
      const sources = new Map<string, ReadonlyArray<SourceEvent>>()
      for (const g of groups) {
        const source = yield* Effect.either(readSource(store, g.plan))
        if (source._tag === "Left")
          return this.hooks.fail(`subscriptions: a source read failed: ${source.left.message}`)
        sources.set(g.key, source.right)
      }
      let converged = false
      const go = () => !converged && !this.hooks.failed()
      const consumers = groups.flatMap((g) => g.consumerPrngs.map((prng) => this.consumer(subs, g, prng, "drain", go)))
      const watch = Effect.gen(this, function* () {
        let quietChecks = 0
        for (let waited = 0; !this.hooks.failed(); waited += 1_000) {
          yield* Effect.sleep(1_000)
          let allDone = true
          for (const g of groups) {
            const info = yield* subs.info(g.plan.stream, g.plan.group)
            const source = sources.get(g.key)!
            const last = source[source.length - 1]?.position
            const s = info?.stats
            const done =
              s !== undefined &&
              s.outstandingMessagesCount === 0 &&
              s.retryBufferCount === 0 &&
              s.readBufferCount === 0 &&
              s.liveBufferCount === 0 &&
              !info!.status.includes("ReplayingParkedMessages") &&
              (last === undefined || (s.finishedThrough !== undefined && s.finishedThrough >= last))
            if (!done) allDone = false
            if (!done && waited >= DrainLimitMillis)
              return this.hooks.fail(
                `subscriptions: liveness: ${g.key} did not finish its source (last ${last}) within ${DrainLimitMillis / 60_000} minutes of the faults stopping: ${JSON.stringify(s)}`
              )
          }
          quietChecks = allDone ? quietChecks + 1 : 0
          // Twice in a row, ticks apart: a replay's truncation and the last checkpoints have run.
          if (quietChecks >= 3) break
        }
        converged = true
      })
      yield* Effect.all([watch, ...consumers], { concurrency: "unbounded", discard: true })
      if (this.hooks.failed()) return
      this.hooks.coverage.hit("subs.drained")
      for (const g of groups) {
        const parked = yield* Effect.either(readParkedIds(store, g.plan.stream, g.plan.group))
        if (parked._tag === "Left")
          return this.hooks.fail(`subscriptions: a parked read failed: ${parked.left.message}`)
        const source = sources.get(g.key)!
        const problems = checkEnd(g.model, source, parked.right)
        this.markEnd(g, source, parked.right)
        this.hooks.trace(`subs ${g.key} end: ${source.length} events, ${parked.right.length} parked`)
        if (problems.length > 0) return this.hooks.fail(`subscriptions: ${problems.slice(0, 5).join("; ")}`)
      }
    })
  }

  private markEnd(g: GroupState, source: ReadonlyArray<SourceEvent>, parked: ReadonlyArray<string>): void {
    const coverage = this.hooks.coverage
    const counts = new Map<string, number>()
    for (const id of parked) counts.set(id, (counts.get(id) ?? 0) + 1)
    if ([...counts.values()].some((n) => n > 1)) coverage.hit("subs.parkedTwice")
    for (const event of source) {
      const copies = g.model.copies.get(event.id) ?? []
      const last = copies[copies.length - 1]
      if (last !== undefined && mayPark(last) && last.action !== "park") coverage.hit("subs.parkedByRetries")
      if (copies.some((c) => c.action === "ack") && copies.some((c, i) => i > 0 && c.life > copies[i - 1]!.life))
        coverage.hit("subs.redeliveredAfterCrash")
    }
  }

  // ---- actors ---------------------------------------------------------------------------------------------

  private appender(store: EventStoreService, go: () => boolean): Effect.Effect<void> {
    const p = this.appendPrng
    return Effect.gen(this, function* () {
      while (go() && this.appended < MaxEvents) {
        yield* Effect.sleep(p.int(0, 400))
        const stream = p.pick(this.plan.streams)
        const events: Array<ProposedEvent> = Array.from({ length: p.int(1, 3) }, () => {
          const correlation = p.chance(0.5) ? `{"$correlationId":"corr-${p.int(0, 3)}"}` : ""
          return {
            eventId: uuid(p),
            eventType: p.pick(["Ordered", "Shipped"]),
            isJson: true,
            data: Buffer.from(`{"n":${this.appended}}`),
            metadata: Buffer.from(correlation)
          }
        })
        this.appended += events.length
        const written = yield* Effect.either(store.append(stream, ExpectedVersion.Any, events))
        this.hooks.trace(
          `subs append ${stream} -> ${written._tag === "Right" ? `@${written.right.firstEventNumber}` : written.left._tag}`
        )
      }
    })
  }

  private consumer(
    subs: SubscriptionsService,
    g: GroupState,
    p: Prng,
    mode: "chaos" | "drain",
    go: () => boolean
  ): Effect.Effect<void> {
    const coverage = this.hooks.coverage
    const { stream, group } = g.plan
    return Effect.gen(this, function* () {
      while (go()) {
        while (g.updating) yield* Effect.sleep(100)
        const count = p.int(1, 5)
        const waitMillis = p.chance(0.4) ? p.int(100, 2_000) : 0
        const checkpoint = g.model.durableCheckpoint
        g.busy++
        const read = yield* subs.readMessages(stream, group, { count, waitMillis })
        if (read._tag !== "Messages" || read.messages.length === 0) {
          g.busy--
          if (waitMillis === 0 || read._tag !== "Messages") yield* Effect.sleep(p.int(50, 500))
          continue
        }
        if (waitMillis > 0) coverage.hit("subs.longPollAnswered")
        this.hooks.trace(
          `subs pull ${g.key} -> ${read.messages.map((m) => `${m.event.position}${m.retryCount > 0 ? `r${m.retryCount}` : ""}`).join(",")}`
        )
        const settings = g.settings
        const answers: Array<{ readonly id: string; readonly copy: Copy; readonly action: Action }> = []
        for (const message of read.messages) {
          const id = message.event.id
          const copy: Copy = {
            life: this.life,
            position: message.event.position,
            retryCount: message.retryCount,
            action: undefined,
            maxRetryCount: settings.maxRetryCount
          }
          const replayed = checkpoint !== undefined && copy.position <= checkpoint
          const problem = g.model.delivered(id, copy, checkpoint)
          this.copies++
          coverage.hit(stream === "$all" ? "subs.deliveredFromAll" : "subs.delivered")
          if (message.retryCount > 0) coverage.hit("subs.retried")
          if (replayed) coverage.hit("subs.replayDelivered")
          if (problem !== undefined) {
            g.busy--
            return this.hooks.fail(`subscriptions: ${problem}`)
          }
          answers.push({ id, copy, action: drawAction(p, mode) })
        }
        // Answered well within the message timeout, or not at all (then it times out).
        yield* Effect.sleep(p.int(0, Math.floor(settings.messageTimeoutMilliseconds / 3)))
        const byAction = new Map<Action, Array<(typeof answers)[number]>>()
        for (const a of answers) byAction.set(a.action, [...(byAction.get(a.action) ?? []), a])
        for (const [action, list] of byAction) {
          for (const a of list) a.copy.action = action
          coverage.hit(answerMarks[action])
          if (action === "abandon") continue
          // By `ids=` at once, or one request per id.
          const batches = p.chance(0.5) ? [list.map((a) => a.id)] : list.map((a) => [a.id])
          for (const ids of batches) {
            const nack = nackOf[action]
            yield* nack === undefined ? subs.ack(stream, group, ids) : subs.nack(stream, group, ids, nack)
          }
        }
        g.busy--
        yield* Effect.sleep(p.int(0, 300))
      }
    })
  }

  private manager(subs: SubscriptionsService, go: () => boolean): Effect.Effect<void> {
    const p = this.managerPrng
    return Effect.gen(this, function* () {
      while (go()) {
        yield* Effect.sleep(p.int(1_000, 8_000))
        const created = this.groups.filter((g) => g.created)
        if (created.length === 0 || !go()) continue
        const g = p.pick(created)
        const choice = p.next()
        if (choice < 0.45) {
          const stopAt = p.chance(0.3) ? p.int(0, 5) : undefined
          g.model.replayAsked = true
          const replayed = yield* subs.replayParked(g.plan.stream, g.plan.group, stopAt)
          this.hooks.trace(`subs replay ${g.key} stopAt=${stopAt ?? "-"} -> ${replayed._tag}`)
          if (replayed._tag === "Success") this.hooks.coverage.hit("subs.replayParked")
        } else if (choice < 0.85) {
          const settings = drawSettings(p)
          yield* this.quiesced(subs, [g], () =>
            Effect.gen(this, function* () {
              g.model.settingsChanged(settings.maxRetryCount)
              const spec = { stream: g.plan.stream, group: g.plan.group, settings, filter: g.plan.filter }
              const updated = yield* subs.update(spec, "admin")
              this.hooks.trace(`subs update ${g.key} -> ${updated._tag}`)
              if (updated._tag === "Success") this.hooks.coverage.hit("subs.updated")
            })
          )
        } else {
          yield* this.quiesced(subs, created, () =>
            Effect.gen(this, function* () {
              const restarted = yield* subs.restart()
              this.hooks.trace(`subs restart -> ${restarted._tag}`)
              if (restarted._tag === "Success") this.hooks.coverage.hit("subs.restarted")
            })
          )
        }
      }
    })
  }

  /**
   * Runs a change to groups with their consumers outside their rounds, so every copy's answer is judged by
   * the settings of the runner that handed it out; then takes the settings the node now runs them with.
   */
  private quiesced(
    subs: SubscriptionsService,
    groups: ReadonlyArray<GroupState>,
    change: () => Effect.Effect<void>
  ): Effect.Effect<void> {
    return Effect.gen(this, function* () {
      for (const g of groups) g.updating = true
      while (groups.some((g) => g.busy > 0)) yield* Effect.sleep(50)
      yield* change()
      for (const g of groups) {
        const info = yield* subs.info(g.plan.stream, g.plan.group)
        if (info !== undefined) {
          g.settings = info.settings
          g.model.settingsChanged(info.settings.maxRetryCount)
        }
        g.updating = false
      }
    }).pipe(Effect.ensuring(Effect.sync(() => groups.forEach((g) => (g.updating = false)))))
  }
}

const drawAction = (p: Prng, mode: "chaos" | "drain"): Action => {
  const r = p.next()
  if (mode === "drain") return r < 0.8 ? "ack" : r < 0.9 ? "skip" : "park"
  if (r < 0.5) return "ack"
  if (r < 0.58) return "skip"
  if (r < 0.66) return "park"
  if (r < 0.78) return "retry"
  if (r < 0.82) return "stop"
  return "abandon"
}

// ---- reads of the store (faults paused) -----------------------------------------------------------------

const readCheckpoint = (
  store: EventStoreService,
  stream: string,
  group: string
): Effect.Effect<number | undefined, ReadFailure> =>
  Effect.map(store.readStreamBackward(checkpointStream(stream, group), -1, 1), (read) => {
    const event = read._tag === "Success" ? read.events[0]?.event : undefined
    if (event === undefined) return undefined
    const text = decodeCheckpoint(event.eventType, event.data.toString("utf8"))
    if (text === undefined) return undefined
    const match = /^C:-?\d+\/P:(-?\d+)$/.exec(text) ?? /^(-?\d+)$/.exec(text)
    return match === null ? undefined : Number(match[1])
  })

const readSource = (store: EventStoreService, plan: PlannedGroup): Effect.Effect<Array<SourceEvent>, ReadFailure> =>
  Effect.gen(function* () {
    const events: Array<SourceEvent> = []
    if (plan.stream === "$all") {
      for (let position = 0; ;) {
        const read = yield* store.readAllForward(position, 500)
        for (const resolved of read.events) {
          const e = originalEvent(resolved)
          if (e.stream.startsWith(SubsStreamPrefix)) events.push({ id: e.eventId, position: e.logPosition })
        }
        if (read.isEnd || read.events.length === 0) return events
        position = read.nextPosition
      }
    }
    for (let from = 0; ;) {
      const read = yield* store.readStreamForward(plan.stream, from, 500)
      if (read._tag !== "Success") return events
      for (const resolved of read.events) {
        const e = originalEvent(resolved)
        events.push({ id: e.eventId, position: e.eventNumber })
      }
      if (read.isEndOfStream || read.events.length === 0) return events
      from = read.nextEventNumber
    }
  })

/** The ids the live part of a group's parked stream links to, in order. */
const readParkedIds = (
  store: EventStoreService,
  stream: string,
  group: string
): Effect.Effect<Array<string>, ReadFailure> =>
  Effect.gen(function* () {
    const ids: Array<string> = []
    for (let from = 0; ;) {
      const read = yield* store.readStreamForward(parkedStream(stream, group), from, 500, {
        resolveLinks: SystemLinkAccess
      })
      if (read._tag !== "Success") return ids
      for (const resolved of read.events) ids.push(resolved.event?.eventId ?? `unresolved:${resolved.link?.eventId}`)
      if (read.isEndOfStream || read.events.length === 0) return ids
      from = read.nextEventNumber
    }
  })
