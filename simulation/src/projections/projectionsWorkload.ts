/**
 * The projections workload of a single-node seed. It drives the node's `Projections` service in-process —
 * the service the `/projections` HTTP routes call — while the node crashes and restarts under the runner's
 * crash driver (runSeed.ts), and checks at the end that what the projections wrote is exactly what the log
 * calls for (projectionsChecks.ts, userProjections.ts).
 *
 * Each lifetime, with faults paused: the workload waits for the service to answer, enables `$by_category`
 * and `$by_event_type` (created stopped), creates the two user projections that do not exist yet and enables
 * any projection found disabled (a crash may have cut a disable short). Then, for a drawn stretch of
 * simulated time, beside the clients (whose streams `c{n}-s{m}` and the ACL actor's `acl-…` are categorised
 * already): an appender writes events of a few types to streams of its own categories, links between them
 * and now and then soft-deletes one; a manager disables and re-enables a projection or restarts the
 * subsystem; a watcher fails the seed as soon as a projection faults. The last lifetime waits (bounded)
 * until every projection has processed the whole log and written everything, then runs the checks.
 */
import { Effect } from "effect"
import type { Prng } from "@vellum/platform"
import { ExpectedVersion, randomUuid, type EventStoreService, type ProposedEvent } from "@vellum/storage"
import {
  checkpointStream,
  type CheckpointTag,
  type ProjectionStatistics,
  type ProjectionsService,
  type Requester
} from "@vellum/projections"
import type { SubsHooks as WorkloadHooks } from "../subscriptions/subsWorkload.js"
import {
  checkLinkStreams,
  expectedCategoryLinks,
  expectedEventTypeLinks,
  fedToSystem,
  type ExpectedLink,
  type LinkCheckContext,
  type LinkCheckReport,
  type ScannedRecord,
  type StoredLink
} from "./projectionsChecks.js"
import { lastScavengePoint, readLinks, scanAll } from "./projectionsReads.js"
import {
  checkCounts,
  CopiesPrefix,
  CopiesProjection,
  copiesQuery,
  CountsProjection,
  countsQuery,
  expectedCopyLinks,
  expectedCounts
} from "./userProjections.js"

export const SystemProjectionsChecked = ["$by_category", "$by_event_type"] as const

interface UserProjection {
  readonly name: string
  readonly query: string
  readonly emitEnabled: boolean
}

const userProjections: ReadonlyArray<UserProjection> = [
  { name: CountsProjection, query: countsQuery, emitEnabled: false },
  { name: CopiesProjection, query: copiesQuery, emitEnabled: true }
]

const allNames = [...SystemProjectionsChecked, ...userProjections.map((p) => p.name)]

/** The operator the workload acts as (an admin may manage every projection). */
const admin: Requester = { runAs: { name: "admin", roles: ["$admins"] }, operator: true }

/** The appender's streams: categories `order` and `shop` (first dash), `relink` for links, one uncategorised. */
const appenderStreams = ["order-1", "order-2", "shop-cart-1", "ledger"] as const
const LinkStream = "relink-1"
const eventTypes = ["Placed", "Shipped", "Noted"] as const
/** Events the appender writes over a seed, at most. */
const MaxEvents = 200
/** How long the service may take to answer after a start, and the projections to catch up at the end. */
const ReadyLimitMillis = 120_000
const CatchUpLimitMillis = 10 * 60_000

/** The `$all` prepare position a statistics position names, if it is one. */
const preparePosition = (tag: CheckpointTag | undefined): number | undefined =>
  tag !== undefined && (tag.kind === "position" || tag.kind === "eventTypes") ? tag.prepare : undefined

/** The last record each projection must have processed: `$by_category` reads links, the others do not. */
const lastToProcess = (records: ReadonlyArray<ScannedRecord>, name: string): number => {
  const withLinks = name === "$by_category"
  let last = -1
  for (const r of records) if (fedToSystem(r) && (withLinks || r.eventType !== "$>")) last = r.logPosition
  return last
}

export class ProjectionsWorkload {
  private readonly appendPrng: Prng
  private readonly managerPrng: Prng
  private readonly lifePrng: Prng
  /** Event numbers the appender's writes were given, to link to. */
  private readonly written: Array<string> = []
  private appended = 0
  /** Links checked against their records at the end (0 until then). */
  linksChecked = 0

  constructor(
    prng: Prng,
    private readonly hooks: WorkloadHooks
  ) {
    this.appendPrng = prng.fork("append")
    this.managerPrng = prng.fork("manager")
    this.lifePrng = prng.fork("lifetimes")
  }

  private fail(message: string): false {
    this.hooks.fail(`projections: ${message}`)
    return false
  }

  /**
   * A lifetime's start, with faults paused: the service answers, the projections exist and are enabled,
   * none is faulted. The service, or undefined when the seed has failed (a node without one fails it).
   */
  begin(
    store: EventStoreService,
    service: ProjectionsService | undefined,
    life: number
  ): Effect.Effect<ProjectionsService | undefined> {
    return Effect.gen(this, function* () {
      if (service === undefined) {
        this.fail("the node runs no Projections service (not wired into the node)")
        return undefined
      }
      const ready = yield* this.prepare(store, service, life)
      return ready ? service : undefined
    })
  }

  private prepare(store: EventStoreService, service: ProjectionsService, life: number): Effect.Effect<boolean> {
    return Effect.gen(this, function* () {
      for (let waited = 0; ; waited += 250) {
        const answer = yield* service.statistics("$by_category")
        if (answer._tag === "Ok") break
        if (waited >= ReadyLimitMillis)
          return this.fail(`$by_category did not answer within 2 minutes of a start: ${JSON.stringify(answer)}`)
        yield* Effect.sleep(250)
      }
      for (const name of allNames) {
        const stats = yield* service.statistics(name)
        const user = userProjections.find((p) => p.name === name)
        if (stats._tag === "NotFound" && user !== undefined) {
          const created = yield* service.create(
            {
              mode: "Continuous",
              name,
              query: user.query,
              handlerType: "JS",
              enabled: true,
              emitEnabled: user.emitEnabled,
              checkpointsEnabled: true,
              trackEmittedStreams: false
            },
            admin
          )
          this.hooks.trace(`projections create ${name} -> ${created._tag}`)
          if (created._tag !== "Ok") return this.fail(`creating ${name} answered ${JSON.stringify(created)}`)
          this.hooks.coverage.hit(user.emitEnabled ? "proj.emittingCreated" : "proj.countingCreated")
          continue
        }
        if (stats._tag !== "Ok") return this.fail(`statistics of ${name} answered ${JSON.stringify(stats)}`)
        if (!stats.value.enabled) {
          const enabled = yield* service.command(name, "enable", admin)
          this.hooks.trace(`projections enable ${name} -> ${enabled._tag}`)
          if (enabled._tag !== "Ok") return this.fail(`enabling ${name} answered ${JSON.stringify(enabled)}`)
          if (name.startsWith("$")) this.hooks.coverage.hit("proj.systemEnabled")
        }
      }
      if (life > 0) yield* this.markResumed(store)
      return yield* this.noneFaulted(service)
    })
  }

  /** A projection that resumes in a later lifetime with a checkpoint written before the crash. */
  private markResumed(store: EventStoreService): Effect.Effect<void> {
    return Effect.forEach(allNames, (name) =>
      Effect.match(store.readStreamBackward(checkpointStream(name), -1, 1), {
        onFailure: () => undefined,
        onSuccess: (read) => {
          if (read._tag === "Success" && read.events.length > 0) this.hooks.coverage.hit("proj.resumedFromCheckpoint")
        }
      })
    ).pipe(Effect.asVoid)
  }

  private noneFaulted(service: ProjectionsService): Effect.Effect<boolean> {
    return Effect.gen(this, function* () {
      for (const name of allNames) {
        const stats = yield* service.statistics(name)
        if (stats._tag === "Ok" && stats.value.status.startsWith("Faulted"))
          return this.fail(`${name} faulted: ${stats.value.stateReason}`)
      }
      return true
    })
  }

  /** The workload of one lifetime: for a drawn stretch of simulated time (unless the node crashes first). */
  run(store: EventStoreService, service: ProjectionsService): Effect.Effect<void> {
    let over = false
    const go = () => !over && !this.hooks.failed()
    const stretch = Effect.sleep(this.lifePrng.int(2_000, 30_000)).pipe(Effect.tap(() => (over = true)))
    const watcher = Effect.gen(this, function* () {
      while (go()) {
        yield* Effect.sleep(1_000)
        if (!(yield* this.noneFaulted(service))) return
      }
    })
    return Effect.all([stretch, this.appender(store, go), this.manager(service, go), watcher], {
      concurrency: "unbounded",
      discard: true
    })
  }

  private appender(store: EventStoreService, go: () => boolean): Effect.Effect<void> {
    const p = this.appendPrng
    return Effect.gen(this, function* () {
      while (go() && this.appended < MaxEvents) {
        yield* Effect.sleep(p.int(0, 400))
        const choice = p.next()
        if (choice < 0.05) {
          const deleted = yield* Effect.either(store.deleteStream("order-2", ExpectedVersion.Any, false))
          this.hooks.trace(`projections soft delete order-2 -> ${deleted._tag}`)
          continue
        }
        const linking = choice < 0.15 && this.written.length > 0
        const stream = linking ? LinkStream : p.pick(appenderStreams)
        const events: Array<ProposedEvent> = []
        for (let i = p.int(1, 3); i > 0; i--) {
          const target = linking ? p.pick(this.written) : undefined
          events.push({
            eventId: yield* randomUuid,
            eventType: target === undefined ? p.pick(eventTypes) : "$>",
            isJson: target === undefined,
            data: Buffer.from(target ?? `{"n":${this.appended + events.length}}`),
            metadata: Buffer.alloc(0)
          })
        }
        this.appended += events.length
        const written = yield* Effect.either(store.append(stream, ExpectedVersion.Any, events))
        if (written._tag === "Right" && !linking)
          events.forEach((_, i) => this.written.push(`${written.right.firstEventNumber + i}@${stream}`))
        this.hooks.trace(
          `projections append ${stream} -> ${written._tag === "Right" ? `@${written.right.firstEventNumber}` : written.left._tag}`
        )
      }
    })
  }

  private manager(service: ProjectionsService, go: () => boolean): Effect.Effect<void> {
    const p = this.managerPrng
    return Effect.gen(this, function* () {
      while (go()) {
        yield* Effect.sleep(p.int(2_000, 10_000))
        if (!go()) return
        if (p.chance(0.75)) {
          const name = p.pick(allNames)
          const disabled = yield* service.command(name, "disable", admin)
          yield* Effect.sleep(p.int(0, 3_000))
          const enabled = yield* service.command(name, "enable", admin)
          this.hooks.trace(`projections disable/enable ${name} -> ${disabled._tag}/${enabled._tag}`)
          if (disabled._tag === "Ok" && enabled._tag === "Ok") this.hooks.coverage.hit("proj.disabledAndEnabled")
        } else {
          const restarted = yield* service.restart(admin)
          this.hooks.trace(`projections restart -> ${restarted._tag}`)
          if (restarted._tag === "Ok") this.hooks.coverage.hit("proj.subsystemRestarted")
        }
      }
    })
  }

  /**
   * The last lifetime (faults paused, clients done): waits until every projection has processed the whole
   * log and holds nothing unwritten, twice in a row a second apart; then checks what they wrote.
   */
  finish(store: EventStoreService, service: ProjectionsService): Effect.Effect<void> {
    return Effect.gen(this, function* () {
      let records: ReadonlyArray<ScannedRecord> = []
      let settled = 0
      for (let waited = 0; settled < 2; waited += 1_000) {
        if (!(yield* this.noneFaulted(service))) return
        const scan = yield* Effect.either(scanAll(store))
        if (scan._tag === "Left") return this.fail(`a scan of $all failed with faults paused: ${scan.left.message}`)
        const behind: Array<string> = []
        for (const name of allNames) {
          const stats = yield* service.statistics(name)
          if (stats._tag !== "Ok") behind.push(`${name}: ${stats._tag}`)
          else if (!caughtUp(stats.value, lastToProcess(scan.right, name)))
            behind.push(`${name}: ${JSON.stringify({ status: stats.value.status, runner: stats.value.runner })}`)
        }
        // Settled: nothing the projections are fed was written since the last look (their own bookkeeping may be).
        const same = scan.right.filter(fedToSystem).length === records.filter(fedToSystem).length
        records = scan.right
        settled = behind.length === 0 ? (same ? settled + 1 : 1) : 0
        if (behind.length > 0 && waited >= CatchUpLimitMillis)
          return this.fail(
            `liveness: not caught up with the log (last record at ${records[records.length - 1]?.logPosition}) within ${CatchUpLimitMillis / 60_000} minutes of the faults stopping: ${behind.join("; ")}`
          )
        if (settled < 2) yield* Effect.sleep(1_000)
      }
      this.hooks.coverage.hit("proj.caughtUp")
      yield* this.check(store, service, records)
    })
  }

  private check(
    store: EventStoreService,
    service: ProjectionsService,
    records: ReadonlyArray<ScannedRecord>
  ): Effect.Effect<void> {
    return Effect.gen(this, function* () {
      const point = yield* Effect.either(lastScavengePoint(store))
      if (point._tag === "Left") return this.fail(`reading the scavenge points failed: ${point.left.message}`)
      const positions = new Set(records.map((r) => r.logPosition))
      const context: LinkCheckContext = { inLog: (p) => positions.has(p), scavengedBelow: point.right }
      const rules: ReadonlyArray<readonly [string, string, Map<string, Array<ExpectedLink>>]> = [
        ["$by_category", "$ce-", expectedCategoryLinks(records)],
        ["$by_event_type", "$et-", expectedEventTypeLinks(records)],
        [CopiesProjection, CopiesPrefix, expectedCopyLinks(records)]
      ]
      for (const [name, prefix, expected] of rules) {
        const streams = new Set([
          ...expected.keys(),
          ...records.map((r) => r.stream).filter((s) => s.startsWith(prefix))
        ])
        const actual = new Map<string, ReadonlyArray<StoredLink>>()
        for (const stream of streams) {
          const links = yield* Effect.either(readLinks(store, stream))
          if (links._tag === "Left") return this.fail(`reading ${stream} failed: ${links.left.message}`)
          actual.set(stream, links.right)
        }
        const report = checkLinkStreams(expected, actual, context)
        this.markLinks(name, expected, report)
        this.linksChecked += report.checked
        this.hooks.trace(`projections ${name}: ${streams.size} streams, ${report.checked} links checked`)
        if (report.problems.length > 0) return this.fail(`${name}: ${report.problems.slice(0, 5).join("; ")}`)
      }
      const state = yield* service.state(CountsProjection, "")
      if (state._tag !== "Ok") return this.fail(`the state of ${CountsProjection} answered ${JSON.stringify(state)}`)
      const problems = checkCounts(state.value.text, expectedCounts(records), point.right >= 0)
      if (problems.length > 0) return this.fail(problems.slice(0, 5).join("; "))
      this.hooks.coverage.hit(point.right >= 0 ? "proj.countsAtLeast" : "proj.countsExact")
    })
  }

  private markLinks(name: string, expected: Map<string, Array<ExpectedLink>>, report: LinkCheckReport): void {
    const coverage = this.hooks.coverage
    const all = [...expected.values()].flat()
    if (report.checked > 0)
      coverage.hit(
        name === "$by_category"
          ? "proj.categoryLinks"
          : name === "$by_event_type"
            ? "proj.eventTypeLinks"
            : "proj.emittedLinks",
        report.checked
      )
    if (report.scavenged > 0) coverage.hit("proj.linkToScavenged", report.scavenged)
    if (name === "$by_category" && all.some((e) => e.fromLink)) coverage.hit("proj.recategorisedLink")
    if (all.some((e) => e.deleted))
      coverage.hit(name === "$by_category" ? "proj.deletionCategorised" : "proj.deletionTyped")
  }
}

/** Processed up to the last record it must, and holding nothing unwritten. */
const caughtUp = (stats: ProjectionStatistics, last: number): boolean => {
  const position = preparePosition(stats.runner.position)
  return (
    stats.status === "Running" &&
    position !== undefined &&
    position >= last &&
    stats.runner.writesInProgress === 0 &&
    stats.runner.writePendingEventsBeforeCheckpoint === 0 &&
    stats.runner.writePendingEventsAfterCheckpoint === 0 &&
    stats.runner.bufferedEvents === 0
  )
}
