/**
 * Harness for the model-based EventStore tests: a real store on a MemoryDisk (restart = close the scope
 * and reopen on the same disk; crash = stop the node's fibers without finalizers, power-loss the disk in
 * "strict" mode, reopen), a manual clock (so event timestamps are known to the model), and the checks
 * that compare what the store answers with what the model predicts.
 *
 * Crash fidelity: every fiber the store forks (writer, index flush/merge worker) runs on a per-node
 * `KillableScheduler`. A crash kills that scheduler first, so no task of the dead node ever runs again
 * (no finalizer, no late index flush writing into the next incarnation's disk), which is what "drop the
 * node" means in the simulator.
 */
import assert from "node:assert/strict"
import { Clock, Effect, Exit, Random, Scheduler, Scope, type Duration } from "effect"
import { Disk, MemoryDisk, Prng } from "@vellum/platform"
import {
  EventFlags,
  defaultStorageConfig,
  make,
  type EventRecord,
  type EventStoreService,
  type HashFn,
  type StorageConfig,
  type StreamRead,
  type EventRead,
  type MetadataRead,
  type AppendResult,
  type ProposedEvent
} from "@vellum/storage"
import * as M from "../../simulation/src/model.js"

export const BASE_STREAMS = ["a", "bb", "c"] as const
export const APPEND_STREAMS = [...BASE_STREAMS, "$$a"] as const
export const READ_STREAMS = [...BASE_STREAMS, "$$a", "$$bb", "$$c"] as const
const UNIVERSE = new Set<string>(READ_STREAMS)
/** Streams the server writes on its own that the model leaves out (one epoch per start). */
const SERVER_STREAMS = new Set(["$epoch-information"])

export const T0_MS = Date.UTC(2024, 0, 1)

/** "Sometimes" marks: how often each interesting path was taken. */
export const coverage = new Map<string, number>()
export const mark = (name: string): void => {
  coverage.set(name, (coverage.get(name) ?? 0) + 1)
}

export const collidingHash: HashFn = (s) => ({ hi: 0, lo: s.length % 2 })

export interface StoreOptions {
  readonly memtableMaxEntries: number
  readonly verifyOnOpen: boolean
  readonly collide: boolean
}

export const storeConfig = (o: StoreOptions): StorageConfig => ({
  ...defaultStorageConfig("/db"),
  chunkSize: 4096,
  preallocateChunks: false,
  readCacheBytes: 64 * 1024,
  memtableMaxEntries: o.memtableMaxEntries,
  verifyChunksOnOpen: o.verifyOnOpen,
  verifyIndexOnOpen: o.verifyOnOpen,
  ...(o.collide ? { streamHash: collidingHash } : {})
})

/** A scheduler that forwards to Effect's default one until killed; then it drops every task. */
class KillableScheduler implements Scheduler.Scheduler {
  alive = true
  shouldYield(fiber: Parameters<Scheduler.Scheduler["shouldYield"]>[0]): number | false {
    return Scheduler.defaultScheduler.shouldYield(fiber)
  }
  scheduleTask(task: Scheduler.Task, priority: number): void {
    if (!this.alive) return
    Scheduler.defaultScheduler.scheduleTask(() => {
      if (this.alive) task()
    }, priority)
  }
}

const liveClock = Clock.make()

/** A clock the test sets by hand (sleeps are real, and the store does not sleep). */
class ManualClock implements Clock.Clock {
  readonly [Clock.ClockTypeId]: Clock.ClockTypeId = Clock.ClockTypeId
  constructor(public nowMs: number) {}
  unsafeCurrentTimeMillis(): number {
    return this.nowMs
  }
  readonly currentTimeMillis = Effect.sync(() => this.nowMs)
  unsafeCurrentTimeNanos(): bigint {
    return BigInt(this.nowMs) * 1_000_000n
  }
  readonly currentTimeNanos = Effect.sync(() => BigInt(this.nowMs) * 1_000_000n)
  sleep(duration: Duration.Duration): Effect.Effect<void> {
    return liveClock.sleep(duration)
  }
}

interface Node {
  readonly store: EventStoreService
  readonly scope: Scope.CloseableScope
  readonly scheduler: KillableScheduler
}

export type WriteAnswer<A> =
  | { readonly _tag: "Ok"; readonly value: A }
  | { readonly _tag: "WrongExpectedVersion"; readonly currentVersion: number }
  | { readonly _tag: "StreamDeleted" }

/** The real system under test. */
export class RealStore {
  readonly mem = new MemoryDisk()
  readonly clock = new ManualClock(T0_MS)
  private node: Node | undefined
  private incarnation = 0
  /** `$all` position up to which the model has been matched. */
  allNext = 0
  readonly trace: Array<string> = []

  constructor(
    readonly config: StorageConfig,
    readonly seed: number
  ) {}

  get store(): EventStoreService {
    if (this.node === undefined) throw new Error("the store is not open")
    return this.node.store
  }

  /** Runs an effect of the store with the test clock, failing the test after 10 s of real time (a hang). */
  run<A, E>(effect: Effect.Effect<A, E>): Promise<A> {
    return Effect.runPromise(
      effect.pipe(
        Effect.timeoutFail({
          duration: "10 seconds",
          onTimeout: () => new Error("the store did not answer within 10 s (hang)")
        }),
        Effect.withClock(this.clock)
      ) as Effect.Effect<A, unknown>
    )
  }

  /** Runs a write and maps its expected failures; anything else fails the test. */
  async write<A>(effect: Effect.Effect<A, { readonly _tag: string }>): Promise<WriteAnswer<A>> {
    return this.run(
      Effect.match(effect, {
        onSuccess: (value): WriteAnswer<A> => ({ _tag: "Ok", value }),
        onFailure: (e): WriteAnswer<A> => {
          if (e._tag === "WrongExpectedVersion")
            return {
              _tag: "WrongExpectedVersion",
              currentVersion: (e as unknown as { currentVersion: number }).currentVersion
            }
          if (e._tag === "StreamDeleted") return { _tag: "StreamDeleted" }
          throw new Error(`unexpected write failure ${e._tag}: ${JSON.stringify(e)}`)
        }
      })
    )
  }

  async open(): Promise<void> {
    const scheduler = new KillableScheduler()
    const mem = this.mem
    const config = this.config
    const random = Random.make(`${this.seed}/${this.incarnation++}`)
    this.node = await this.run(
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        const store = yield* make(config).pipe(
          Effect.provideService(Disk, mem.service),
          Scope.extend(scope),
          Effect.withScheduler(scheduler),
          Effect.withRandom(random)
        )
        return { store, scope, scheduler }
      })
    )
  }

  /** Graceful restart: finalizers run, then the store is reopened on the same disk. */
  async restart(): Promise<void> {
    const node = this.node!
    this.node = undefined
    await this.run(Scope.close(node.scope, Exit.void))
    node.scheduler.alive = false
    await this.open()
  }

  /**
   * Power loss: the node's fibers stop where they are, then the disk loses what was not synced ("strict":
   * all of it; "random": a random prefix of each file's unsynced writes survives, the last one possibly
   * torn, and each undurable directory entry change is kept or reverted), then reopen.
   */
  async crash(seed: number, mode: "strict" | "random" = "strict"): Promise<void> {
    const node = this.node!
    this.node = undefined
    node.scheduler.alive = false
    this.mem.crash(new Prng(seed), mode)
    await this.open()
  }

  async dispose(): Promise<void> {
    const node = this.node
    this.node = undefined
    if (node !== undefined) await this.run(Scope.close(node.scope, Exit.void))
  }
}

// ---------------------------------------------------------------------------------------------------
// The fast-check world (model side)

export class World {
  readonly model = new M.StoreModel()
  nowMs = T0_MS
  /** Every event id a client has sent, in order (for reuse). */
  readonly sentIds: Array<string> = []
  private fresh = 0
  lastAppend:
    { readonly stream: string; readonly expected: number; readonly events: ReadonlyArray<ProposedEvent> } | undefined

  freshId(): string {
    this.fresh++
    return `00000000-0000-4000-8000-${this.fresh.toString(16).padStart(12, "0")}`
  }

  remember(ids: ReadonlyArray<string>): void {
    for (const id of ids) if (!this.sentIds.includes(id)) this.sentIds.push(id)
  }
}

/** Advances both clocks (one second per command). */
export const tick = (w: World, r: RealStore): number => {
  w.nowMs += 1000
  r.clock.nowMs = w.nowMs
  return w.nowMs * 1000
}

const describeOutcome = (o: M.WriteOutcome): string =>
  o._tag === "Appended"
    ? `Appended(${o.first}..${o.last}${o.idempotent ? ", idempotent" : ""})`
    : o._tag === "WrongExpectedVersion"
      ? `WEV(current ${o.current})`
      : "StreamDeleted"

const observedAppend = (answer: WriteAnswer<AppendResult>): M.WriteOutcome =>
  answer._tag === "Ok"
    ? {
        _tag: "Appended",
        first: answer.value.firstEventNumber,
        last: answer.value.lastEventNumber,
        idempotent: answer.value.idempotent
      }
    : answer._tag === "WrongExpectedVersion"
      ? { _tag: "WrongExpectedVersion", current: answer.currentVersion }
      : { _tag: "StreamDeleted" }

export interface PendingCheck {
  /** Runs once `$all` has been matched (positions learned). */
  readonly afterSync: () => void
}

/**
 * Judges one append's answer against the model's possible decisions, applies it to the model, and
 * returns the position check to run after the `$all` sync.
 */
export const judgeAppend = (
  w: World,
  label: string,
  stream: string,
  expected: number,
  events: ReadonlyArray<ProposedEvent>,
  answer: WriteAnswer<AppendResult>,
  nowMicros: number
): PendingCheck => {
  const ids = events.map((e) => e.eventId)
  const possible = w.model.possibleDecisions(stream, expected, ids)
  const actual = observedAppend(answer)
  const consistent = possible.filter((p) => M.sameOutcome(M.outcomeOf(p.decision, events.length), actual))
  if (consistent.length === 0) {
    const allowed = [...new Set(possible.map((p) => describeOutcome(M.outcomeOf(p.decision, events.length))))].join(
      " or "
    )
    assert.fail(`${label}: expected ${allowed}, got ${describeOutcome(actual)}`)
  }
  w.model.learnCache(consistent)
  const decision = consistent[0]!.decision
  if (possible.length > 1)
    mark(
      `append: cache uncertain after restart (${new Set(possible.map((p) => p.decision._tag)).size > 1 ? "outcomes differ" : "same outcome"})`
    )
  markDecision(w, stream, expected, decision, events.length)
  const written = w.model.applyAppend(stream, decision, events, nowMicros)
  if (written.some((e) => e.origin === "recreate"))
    mark(`recreate via ${M.isMetastream(stream) ? "metadata" : "append"}`)
  return {
    afterSync: () => {
      if (answer._tag !== "Ok" || events.length === 0) return
      const target =
        decision._tag === "Idempotent" ? w.model.eventsOf(stream)[decision.last] : written[events.length - 1]
      assert.ok(target !== undefined, `${label}: the model has no event to take the position from`)
      assert.strictEqual(
        answer.value.position,
        target.position,
        `${label}: the position returned is not the last event's position`
      )
    }
  }
}

const markDecision = (w: World, stream: string, expected: number, d: M.Decision, n: number): void => {
  const ev =
    expected === M.ExpectedAny
      ? "Any"
      : expected === M.ExpectedStreamExists
        ? "StreamExists"
        : expected === M.ExpectedNoStream
          ? "NoStream"
          : "N"
  const state = w.model.isHardDeleted(stream)
    ? "hard-deleted"
    : w.model.isSoftDeleted(stream)
      ? "soft-deleted"
      : w.model.lastEventNumber(stream) < 0
        ? "empty"
        : "existing"
  mark(
    `append ${ev} on ${state}${M.isMetastream(stream) ? " metastream" : ""} → ${d._tag}${n === 0 ? " (empty batch)" : n > 1 ? " (multi)" : ""}`
  )
}

export const judgeDelete = (
  label: string,
  expected: { outcome: M.WriteOutcome; written: Array<M.ModelEvent> },
  answer: WriteAnswer<{ readonly position: number }>
): PendingCheck => {
  const actualTag = answer._tag === "Ok" ? "Appended" : answer._tag
  mark(`${label.split("(")[0]} → ${actualTag}`)
  const expectedText = describeOutcome(expected.outcome)
  assert.strictEqual(
    actualTag,
    expected.outcome._tag,
    `${label}: expected ${expectedText}, got ${JSON.stringify(answer)}`
  )
  if (answer._tag === "WrongExpectedVersion" && expected.outcome._tag === "WrongExpectedVersion") {
    assert.strictEqual(answer.currentVersion, expected.outcome.current, `${label}: WEV current version`)
  }
  return {
    afterSync: () => {
      if (answer._tag === "Ok")
        assert.strictEqual(answer.value.position, expected.written[0]!.position, `${label}: delete position`)
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Event comparison

const LONG_MAX_RE = /(?<![\d.])9223372036854775807(?![\d.])/g
/** JSON with long.MaxValue kept apart from its rounded neighbours. */
const normalizeJson = (bytes: Uint8Array): unknown => {
  const text = Buffer.from(bytes).toString("utf8").replace(LONG_MAX_RE, '"<long.MaxValue>"')
  try {
    return JSON.parse(text)
  } catch {
    return { unparseable: Buffer.from(bytes).toString("utf8") }
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** Checks one event the store returned against the model's; learns server-chosen ids and positions. */
export const checkEvent = (
  m: M.StoreModel,
  actual: EventRecord | undefined,
  expected: M.ModelEvent,
  label: string,
  learn = false
): void => {
  assert.ok(actual !== undefined, `${label}: missing event (expected ${expected.stream}#${expected.eventNumber})`)
  const at = `${label}: ${expected.stream}#${expected.eventNumber}`
  assert.strictEqual(actual.stream, expected.stream, `${at}: stream`)
  assert.strictEqual(actual.eventNumber, expected.eventNumber, `${at}: event number`)
  assert.strictEqual(actual.eventType, expected.eventType, `${at}: event type`)
  assert.strictEqual((actual.flags & EventFlags.Json) !== 0, expected.isJson, `${at}: JSON flag`)
  assert.strictEqual(actual.createdMicros, expected.createdMicros, `${at}: created time`)
  assert.deepStrictEqual(Buffer.from(actual.metadata), Buffer.from(expected.metadata), `${at}: event metadata`)
  if (expected.origin === "softDelete" || expected.origin === "recreate") {
    assert.deepStrictEqual(
      normalizeJson(actual.data),
      normalizeJson(expected.data),
      `${at}: ${expected.origin} metadata body`
    )
  } else {
    assert.deepStrictEqual(Buffer.from(actual.data), Buffer.from(expected.data), `${at}: data`)
  }
  if (expected.eventId === undefined) {
    assert.ok(learn, `${at}: id not learned yet`)
    assert.match(actual.eventId, UUID, `${at}: server-chosen event id`)
    m.learnEventId(expected, actual.eventId)
  } else {
    assert.strictEqual(actual.eventId, expected.eventId, `${at}: event id`)
  }
  if (expected.position === undefined) {
    assert.ok(learn, `${at}: position not learned yet`)
    expected.position = actual.logPosition
  } else {
    assert.strictEqual(actual.logPosition, expected.position, `${at}: log position`)
  }
}

const inUniverse = (e: EventRecord, label: string): boolean => {
  if (UNIVERSE.has(e.stream)) return true
  assert.ok(SERVER_STREAMS.has(e.stream), `${label}: $all holds an event of unexpected stream ${e.stream}`)
  return false
}

/** Reads `$all` past what is already matched and matches it with the model's new events (in order). */
export const syncAll = async (w: World, r: RealStore, label: string): Promise<void> => {
  const pending = w.model.log.filter((e) => e.position === undefined)
  const found: Array<EventRecord> = []
  let next = r.allNext
  for (let page = 0; ; page++) {
    assert.ok(page < 1000, `${label}: $all paging does not end`)
    const read = await r.run(r.store.readAllForward(next, 4096))
    for (const e of read.events) if (inUniverse(e.event!, label)) found.push(e.event!)
    assert.ok(read.nextPosition >= next, `${label}: $all nextPosition went backwards`)
    next = read.nextPosition
    if (read.isEnd) break
  }
  const lastKnown = w.model.log.filter((e) => e.position !== undefined).at(-1)?.position ?? -1
  assert.strictEqual(
    found.length,
    pending.length,
    `${label}: $all gained ${found.length} events [${found.map((e) => `${e.stream}#${e.eventNumber}`).join(", ")}], the model wrote ${pending.length} [${pending.map((e) => `${e.stream}#${e.eventNumber}`).join(", ")}]`
  )
  pending.forEach((expected, i) => {
    checkEvent(w.model, found[i], expected, `${label} ($all)`, true)
    assert.ok(
      expected.position! > (i === 0 ? lastKnown : pending[i - 1]!.position!),
      `${label}: $all positions must increase`
    )
  })
  r.allNext = next
}

export const checkStreamRead = (
  m: M.StoreModel,
  actual: StreamRead,
  expected: M.StreamReadModel,
  label: string
): void => {
  assert.strictEqual(
    actual._tag,
    expected._tag,
    `${label}: read result ${JSON.stringify(actual._tag === "Success" ? { ...actual, events: actual.events.length } : actual)}, expected ${JSON.stringify(expected._tag === "Success" ? { ...expected, events: expected.events.length } : expected)}`
  )
  if (actual._tag === "NoStream" && expected._tag === "NoStream") {
    assert.strictEqual(actual.lastEventNumber, expected.lastEventNumber, `${label}: NoStream lastEventNumber`)
  }
  if (actual._tag === "Success" && expected._tag === "Success") {
    const page = (
      p: { nextEventNumber: number; lastEventNumber: number; isEndOfStream: boolean },
      events: ReadonlyArray<number>
    ) => ({
      events,
      nextEventNumber: p.nextEventNumber,
      lastEventNumber: p.lastEventNumber,
      isEndOfStream: p.isEndOfStream
    })
    assert.deepStrictEqual(
      page(
        actual,
        actual.events.map((e) => e.event!.eventNumber)
      ),
      page(
        expected,
        expected.events.map((e) => e.eventNumber)
      ),
      `${label}: page`
    )
    expected.events.forEach((e, i) => checkEvent(m, actual.events[i]!.event, e, label))
  }
}

export const checkEventRead = (m: M.StoreModel, actual: EventRead, expected: M.EventReadModel, label: string): void => {
  assert.strictEqual(actual._tag, expected._tag, `${label}: single-event read`)
  if (actual._tag === "Success" && expected._tag === "Success") checkEvent(m, actual.event.event, expected.event, label)
}

export const checkMetadataRead = (actual: MetadataRead, expected: M.MetadataReadModel, label: string): void => {
  assert.strictEqual(actual._tag, expected._tag, `${label}: metadata read`)
  if (expected._tag === "StreamDeleted") return
  assert.deepStrictEqual(
    {
      metaLastEventNumber: actual.metaLastEventNumber,
      maxCount: actual.metadata.maxCount,
      truncateBefore: actual.metadata.truncateBefore
    },
    {
      metaLastEventNumber: expected.metaLastEventNumber,
      maxCount: expected.metadata.maxCount,
      truncateBefore: expected.metadata.truncateBefore
    },
    `${label}: metadata`
  )
}

/** Reads every stream both ways and `$all` both ways with the given page size, comparing with the model. */
export const checkEverything = async (w: World, r: RealStore, label: string, page = 4096): Promise<void> => {
  for (const stream of READ_STREAMS) {
    checkStreamRead(
      w.model,
      await r.run(r.store.readStreamForward(stream, 0, 4096)),
      w.model.readForward(stream, 0, 4096),
      `${label}: ${stream} forward`
    )
    checkStreamRead(
      w.model,
      await r.run(r.store.readStreamBackward(stream, -1, 4096)),
      w.model.readBackward(stream, -1, 4096),
      `${label}: ${stream} backward`
    )
    checkEventRead(
      w.model,
      await r.run(r.store.readEvent(stream, -1)),
      w.model.readEvent(stream, -1),
      `${label}: ${stream} last event`
    )
  }
  for (const stream of BASE_STREAMS) {
    checkMetadataRead(
      await r.run(r.store.getStreamMetadata(stream)),
      w.model.readMetadata(stream),
      `${label}: ${stream} metadata`
    )
  }
  await checkAll(w, r, label, page)
}

/** `$all` forward and backward, paged, equals the model's log (server streams skipped). */
export const checkAll = async (w: World, r: RealStore, label: string, page: number): Promise<void> => {
  const forward: Array<EventRecord> = []
  let position = 0
  for (let i = 0; ; i++) {
    assert.ok(i < 100_000, `${label}: $all forward paging does not end`)
    const read = await r.run(r.store.readAllForward(position, page))
    assert.ok(read.events.length <= page, `${label}: $all page too long`)
    for (const e of read.events) if (inUniverse(e.event!, label)) forward.push(e.event!)
    if (read.isEnd) break
    assert.ok(read.nextPosition > position, `${label}: $all forward paging is stuck at ${position}`)
    position = read.nextPosition
  }
  const backward: Array<EventRecord> = []
  position = -1
  for (let i = 0; ; i++) {
    assert.ok(i < 100_000, `${label}: $all backward paging does not end`)
    const read = await r.run(r.store.readAllBackward(position, page))
    assert.ok(read.events.length <= page, `${label}: $all page too long`)
    for (const e of read.events) if (inUniverse(e.event!, label)) backward.push(e.event!)
    if (read.isEnd) break
    assert.ok(position === -1 || read.nextPosition < position, `${label}: $all backward paging is stuck at ${position}`)
    position = read.nextPosition
  }
  const describe = (events: ReadonlyArray<{ stream: string; eventNumber: number }>) =>
    events.map((e) => `${e.stream}#${e.eventNumber}`)
  assert.deepStrictEqual(describe(forward), describe(w.model.log), `${label}: $all forward`)
  assert.deepStrictEqual(describe(backward), describe([...w.model.log].reverse()), `${label}: $all backward`)
  w.model.log.forEach((e, i) => checkEvent(w.model, forward[i], e, `${label}: $all forward`))
  ;[...w.model.log].reverse().forEach((e, i) => checkEvent(w.model, backward[i], e, `${label}: $all backward`))
}

export type { ProposedEvent }
