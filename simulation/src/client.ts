/**
 * A simulated client: issues one operation at a time against the store on the streams it owns, and checks
 * every answer against the reference model at once (an owned stream has exactly one writer, so its
 * outcomes are fully determined by the model; several clients run concurrently on disjoint streams, so
 * group commit batches them together).
 *
 * The store is a `SimStore`: the node's HTTP app (the default) or the EventStore service directly.
 * An answer that is neither a success nor a rule failure (a disk error, writes refused, a 5xx, a crash
 * mid-operation) leaves the operation indeterminate: the client records it in `pending` (one per stream)
 * and leaves that stream alone until a checker finds out whether it was written — after the next restart,
 * or during the run once the prober's append is acknowledged (prober.ts). An answer no correct node gives
 * (`Unexpected`) fails the run.
 */
import { Clock, Duration, Effect } from "effect"
import type { Prng } from "@vellum/platform"
import type { ProposedEvent } from "@vellum/storage"
import {
  ExpectedAny,
  ExpectedNoStream,
  ExpectedStreamExists,
  LongMax,
  decideCommit,
  isMetastream,
  metastreamOf,
  originalStreamOf,
  outcomeOf,
  type Decision,
  type PossibleDecision,
  type StoreModel,
  type StreamReadModel,
  type EventReadModel,
  type WriteOutcome
} from "./model.js"
import { Coverage, type CoverageMark } from "./coverage.js"
import { EventTimes, anyAgrees, expiredPrefix, possibleEventReads, possibleReads } from "./expiry.js"
import { RetryPlanner, type Retry } from "./retries.js"
import { ScavengePoints } from "./scavengePoints.js"
import { compareEventRead, compareStreamRead, writeMatches } from "./readChecks.js"
import type {
  ObservedEventRead,
  ObservedStreamRead,
  ObservedWrite,
  ReadRequest,
  SimStore,
  StoreFailure
} from "./simStore.js"

export type PendingOp =
  | {
      readonly kind: "append"
      readonly stream: string
      readonly expected: number
      readonly events: ReadonlyArray<ProposedEvent>
    }
  | { readonly kind: "hardDelete" | "softDelete"; readonly stream: string; readonly expected: number }

/** A write the scavenge focus (scavengeWorkload.ts) asks a client to make next, on one of its streams. */
export interface SteeredWrite {
  readonly stream: string
  readonly kind: "append" | "metadata" | "softDelete" | "hardDelete"
  /** Whether a run past its scavenge point was in progress or stopped when the write was chosen. */
  readonly during: "running" | "stopped"
  /** For metadata: the JSON body, its coverage mark, and whether it tightens or loosens the stream's limits. */
  readonly metadata?: { readonly data: Buffer; readonly mark: CoverageMark }
  readonly change?: "tighten" | "loosen"
}

/** Asked before every operation: a write to make instead of a random operation, or undefined. */
export interface WriteFocus {
  readonly steer: (streams: ReadonlyArray<string>, model: StoreModel) => Effect.Effect<SteeredWrite | undefined>
  /** A steered write was answered and the model agreed (and applied it). */
  readonly acknowledged: (write: SteeredWrite, outcome: ObservedWrite) => Effect.Effect<void>
}

/**
 * An indeterminate operation: `settledBy` numbers its failed answer (`Auditor.answered`); Infinity while it
 * runs (a crash may cut it).
 */
export interface Pending {
  readonly op: PendingOp
  readonly settledBy: number
}

/** Shared by the clients and the checkers: the model, the verdict, and counters. */
export class Auditor {
  failure: string | undefined
  acknowledged = 0
  indeterminate = 0
  /** Failed write answers so far: each pending operation carries its number. */
  answered = 0
  /** Disk-full periods the node healed from without a restart (space freed, then an append acknowledged). */
  healed = 0
  /** Indeterminate operations reconciled during the run (not at a restart). */
  settledInRun = 0
  /** Scavenges the operator started. */
  scavenges = 0
  /** How often each rule ran (coverage.ts). */
  readonly coverage = new Coverage()
  /** When each event was written, as far as the simulator knows (`$maxAge`, scavenge points). */
  readonly times = new EventTimes()
  /** The scavenge points the node wrote, and what they let a scavenge remove (the model's discard rule). */
  readonly scavengePoints: ScavengePoints
  /**
   * Learns the scavenge points the node wrote since the last call (set for each lifetime: it reads the
   * node's store). Run before every check that lets an event be missing; false when the read failed.
   */
  learnPoints: Effect.Effect<boolean> = Effect.succeed(true)
  constructor(
    readonly model: StoreModel,
    readonly trace: (line: string) => void
  ) {
    this.scavengePoints = new ScavengePoints(model, this.times, () => this.coverage.hit("scavenge.expiredRemoved"))
    model.discardRule = this.scavengePoints
  }

  fail(message: string): void {
    if (this.failure === undefined) this.failure = message
  }
}

const hex = (n: number, width: number) => (n >>> 0).toString(16).padStart(width, "0")

export class SimClient {
  readonly streams: ReadonlyArray<string>
  /** Indeterminate operations, by the client stream they touch (a metadata write counts for its stream). */
  readonly pending = new Map<string, Pending>()
  private seq = 0
  /** Earlier appends, sent again wholly or in part (retries.ts). */
  private readonly retries: RetryPlanner
  /** `$maxAge` choices draw from their own stream, so the other draws stay what they were. */
  private readonly agePrng: Prng

  constructor(
    readonly id: number,
    readonly prng: Prng,
    streamCount: number,
    private readonly maxDataBytes: number,
    private readonly focus?: WriteFocus,
    /** The streams' names (the ACL actor's); by default `c{id}-s{i}`. */
    names?: ReadonlyArray<string>
  ) {
    this.streams = names ?? Array.from({ length: streamCount }, (_, i) => `c${id}-s${i}`)
    this.retries = new RetryPlanner(prng.fork("retries"), (count) => this.newEvents(count))
    this.agePrng = prng.fork("maxAge")
  }

  protected uuid(): string {
    const p = this.prng
    return `${hex(p.nextU32(), 8)}-${hex(p.nextU32() & 0xffff, 4)}-4${hex(p.nextU32() & 0xfff, 3)}-${hex((p.nextU32() & 0x3fff) | 0x8000, 4)}-${hex(p.nextU32() & 0xffff, 4)}${hex(p.nextU32(), 8)}`
  }

  protected newEvents(count: number): Array<ProposedEvent> {
    const seq = this.seq++
    return Array.from({ length: count }, (_, i) => {
      const body = indentedJson({
        c: this.id,
        s: seq,
        i,
        n: count,
        pad: "x".repeat(this.prng.int(0, this.maxDataBytes))
      })
      return { eventId: this.uuid(), eventType: "E", isJson: true, data: Buffer.from(body), metadata: Buffer.alloc(0) }
    })
  }

  private pickExpected(current: number): number {
    const r = this.prng.next()
    if (current === LongMax) return this.prng.pick([ExpectedAny, ExpectedNoStream, 0])
    if (r < 0.5) return current
    if (r < 0.7) return ExpectedAny
    if (r < 0.8) return ExpectedNoStream
    if (r < 0.85) return ExpectedStreamExists
    if (r < 0.9) return current + 1
    if (r < 0.95) return Math.max(-1, current - 1)
    return this.prng.int(0, 5)
  }

  private metadataBody(): { data: Buffer; isJson: boolean; mark: CoverageMark } {
    const r = this.prng.next()
    const json = (value: object, mark: CoverageMark) => ({ data: Buffer.from(indentedJson(value)), isJson: true, mark })
    const age = this.agePrng
    if (age.chance(0.4)) {
      const limits = age.pick([{}, {}, { $maxCount: age.int(2, 8) }, { $tb: age.int(0, 4) }])
      return json({ $maxAge: age.int(1, 30), ...limits }, "metadata.$maxAge")
    }
    if (r < 0.35) return json({ $maxCount: this.prng.int(1, 6) }, "metadata.$maxCount")
    if (r < 0.65) return json({ $tb: this.prng.int(0, 8) }, "metadata.$tb")
    if (r < 0.85) return json({ owner: `c${this.id}`, note: this.prng.int(0, 99) }, "metadata.custom")
    if (r < 0.93) return { data: Buffer.from("{not json"), isJson: true, mark: "metadata.invalidJson" }
    return { data: Buffer.from("raw bytes"), isJson: false, mark: "metadata.notJson" }
  }

  /** One operation; failures of the store's rules are answers, other failures make it indeterminate. */
  step(store: SimStore, auditor: Auditor): Effect.Effect<void> {
    const streams = this.streams.filter((s) => !this.pending.has(s))
    // Every stream waits for a checker: let time pass (the node heals on its clock, the prober probes).
    if (streams.length === 0) return Effect.sleep(Duration.millis(10))
    if (this.focus === undefined) return this.stepOn(store, auditor, streams, undefined)
    return Effect.flatMap(this.focus.steer(streams, auditor.model), (steer) =>
      this.stepOn(store, auditor, streams, steer)
    )
  }

  private stepOn(
    store: SimStore,
    auditor: Auditor,
    streams: ReadonlyArray<string>,
    steer: SteeredWrite | undefined
  ): Effect.Effect<void> {
    const model = auditor.model
    const stream = steer?.stream ?? this.prng.pick(streams)
    const r = steer === undefined ? this.prng.next() : SteeredDraw[steer.kind]
    const tag = `c${this.id}`

    const write = (
      op: PendingOp,
      run: Effect.Effect<ObservedWrite, StoreFailure>,
      expect: () => ReadonlyArray<WriteOutcome>,
      apply: (outcome: ObservedWrite) => void
    ) =>
      Effect.gen(this, function* () {
        const key = isMetastream(op.stream) ? originalStreamOf(op.stream) : op.stream
        this.pending.set(key, { op, settledBy: Number.POSITIVE_INFINITY })
        auditor.times.sent(op, yield* Clock.currentTimeMillis)
        const result = yield* Effect.either(run)
        if (result._tag === "Left") {
          const failure = result.left
          if (failure._tag === "Unexpected")
            return auditor.fail(
              `${tag} ${op.kind} to ${op.stream} with expected version ${op.expected}: ${failure.description}`
            )
          auditor.indeterminate++
          auditor.coverage.hit("append.indeterminate")
          this.pending.set(key, { op, settledBy: auditor.answered++ })
          auditor.trace(`${tag} ${op.kind} ${op.stream} indeterminate ${failure.reason}`)
          return
        }
        const outcome = result.right
        // A scavenge point written while the write ran may have removed stored events it compares with.
        // (The operation stays pending until the model has it: a crash during this read must not lose it.)
        yield* auditor.learnPoints
        this.pending.delete(key)
        auditor.trace(`${tag} ${op.kind} ${op.stream} exp=${op.expected} -> ${JSON.stringify(outcome)}`)
        const allowed = expect()
        if (!allowed.some((o) => writeMatches(o, outcome))) {
          auditor.fail(
            `${tag} ${op.kind} to ${op.stream} with expected version ${op.expected}: got ${JSON.stringify(outcome)}, the model allows ${JSON.stringify(allowed)}`
          )
          return
        }
        auditor.acknowledged++
        const before = model.log.length
        apply(outcome)
        auditor.times.written(op, model.log.slice(before), yield* Clock.currentTimeMillis)
        if (steer !== undefined && this.focus !== undefined) yield* this.focus.acknowledged(steer, outcome)
      })

    const appendOp = (
      target: string,
      expected: number,
      events: ReadonlyArray<ProposedEvent>,
      run: Effect.Effect<ObservedWrite, StoreFailure>,
      retry?: Retry
    ) => {
      // Decided once the answer came (and the scavenge points it may depend on were learned).
      let decided: Array<PossibleDecision> | undefined
      const possible = () =>
        (decided ??= model.possibleDecisions(
          target,
          expected,
          events.map((e) => e.eventId)
        ))
      return write(
        { kind: "append", stream: target, expected, events },
        run,
        () => possible().map((p) => outcomeOf(p.decision, events.length)),
        (outcome) => {
          const consistent = possible().filter((p) => writeMatches(outcomeOf(p.decision, events.length), outcome))
          auditor.coverage.hit(appendMark(expected, consistent[0]!.decision))
          for (const m of retry?.observed(consistent[0]!.decision) ?? []) auditor.coverage.hit(m)
          if (consistent[0]!.decision._tag === "Ok" && consistent[0]!.decision.softDeleted)
            auditor.coverage.hit("append.recreatesSoftDeleted")
          model.learnCache(consistent)
          model.applyAppend(target, consistent[0]!.decision, events, 0)
        }
      )
    }

    if (r < 0.42) {
      // A steered append is meant to be written: the exact current version.
      const expected =
        steer === undefined ? this.pickExpected(model.lastEventNumber(stream)) : model.lastEventNumber(stream)
      const events = this.newEvents(this.prng.int(1, 3))
      this.retries.sent(stream, expected, events)
      return appendOp(stream, expected, events, store.append(stream, expected, events))
    }
    const retry = r < 0.5 ? this.retries.plan(model, streams) : undefined
    if (retry !== undefined) {
      const { stream: s, expected, events } = retry
      return appendOp(s, expected, events, store.append(s, expected, events), retry)
    }
    if (r < 0.58) {
      const meta = metastreamOf(stream)
      const expected = steer !== undefined || this.prng.chance(0.7) ? model.lastEventNumber(meta) : ExpectedAny
      const body = steer?.metadata === undefined ? this.metadataBody() : { ...steer.metadata, isJson: true }
      auditor.coverage.hit(body.mark)
      const event = {
        eventId: this.uuid(),
        eventType: "$metadata",
        isJson: body.isJson,
        data: body.data,
        metadata: Buffer.alloc(0)
      }
      return appendOp(meta, expected, [event], store.setMetadata(stream, expected, event))
    }
    if (r < 0.61) {
      const hard = steer === undefined ? this.prng.chance(0.25) : steer.kind === "hardDelete"
      const expected = steer !== undefined || this.prng.chance(0.7) ? model.lastEventNumber(stream) : ExpectedAny
      const kind = hard ? "hardDelete" : "softDelete"
      return write(
        { kind, stream, expected },
        store.deleteStream(stream, expected, hard),
        // Peek at the model's answer without applying it (applied below once the store agreed).
        () => [peekDelete(model, stream, expected, hard)],
        (outcome) => {
          auditor.coverage.hit(`delete.${hard ? "hard" : "soft"}.${outcome._tag === "Appended" ? "ok" : "refused"}`)
          if (outcome._tag !== "Appended") return
          if (hard) model.hardDelete(stream, expected, 0)
          else model.softDelete(stream, expected, 0)
        }
      )
    }
    return this.read(store, auditor, stream, r)
  }

  private read(store: SimStore, auditor: Auditor, stream: string, r: number): Effect.Effect<void> {
    const model = auditor.model
    const last = Math.max(0, Math.min(model.lastEventNumber(stream), 50))
    const count = this.prng.int(1, 6)
    if (r < 0.9) {
      const request: ReadRequest =
        r < 0.8
          ? { stream, direction: "forward", from: this.prng.int(0, last + 2), count }
          : { stream, direction: "backward", from: this.prng.chance(0.3) ? -1 : this.prng.int(0, last + 2), count }
      const expected = (t0: number, t1: number) => possibleReads(model, auditor.times, request, t0, t1)
      return checkRead(
        auditor,
        `c${this.id} read${request.direction === "forward" ? "Forward" : "Backward"} ${stream} ${request.from} ${count}`,
        request,
        store.readStream(request),
        expected
      )
    }
    const n = this.prng.chance(0.2) ? -1 : this.prng.int(0, last + 1)
    return checkEventRead(
      auditor,
      `c${this.id} readEvent ${stream} ${n}`,
      store.readEvent(stream, n),
      (t0, t1) => possibleEventReads(model, auditor.times, stream, n, t0, t1),
      stream
    )
  }
}

/** The draw that selects each kind of steered write in `stepOn` (appends below 0.42, metadata from 0.5, deletes from 0.58). */
const SteeredDraw: Record<SteeredWrite["kind"], number> = {
  append: 0,
  metadata: 0.5,
  softDelete: 0.58,
  hardDelete: 0.58
}

/** The coverage mark of an acknowledged append: its expected version's kind and the model's decision. */
const appendMark = (expected: number, decision: Decision): CoverageMark => {
  const kind =
    expected === ExpectedAny
      ? "any"
      : expected === ExpectedNoStream
        ? "noStream"
        : expected === ExpectedStreamExists
          ? "streamExists"
          : "exact"
  const result =
    decision._tag === "Ok"
      ? "ok"
      : decision._tag === "Idempotent"
        ? "idempotent"
        : decision._tag === "WrongExpectedVersion"
          ? "wrongExpectedVersion"
          : "streamDeleted"
  return `append.${kind}.${result}`
}

/** JSON as the reference stores event data given as JSON (two-space indentation): the HTTP form keeps it byte for byte. */
export const indentedJson = (value: object): string => JSON.stringify(value, null, 2)

/** The model's answer to a delete, without applying it (applied once the store agreed). */
export const peekDelete = (model: StoreModel, stream: string, expected: number, hard: boolean): WriteOutcome => {
  if (!hard && model.lastEventNumber(stream) === -1 && model.lastEventNumber(metastreamOf(stream)) === -1) {
    return { _tag: "WrongExpectedVersion", current: -1 }
  }
  const decision = decideCommit(model.view(), stream, expected, ["a fresh id no event has"])
  switch (decision._tag) {
    case "Ok":
      return { _tag: "Appended", first: 0, last: 0, idempotent: false }
    case "StreamDeleted":
      return { _tag: "StreamDeleted" }
    case "WrongExpectedVersion":
      return { _tag: "WrongExpectedVersion", current: decision.current }
    case "Idempotent":
      return { _tag: "WrongExpectedVersion", current: model.lastEventNumber(stream) }
  }
}

/**
 * A read whose failure is traced, not checked; an unexpected reply fails the run. `compare` gets the
 * read's send and answer times (world ms: `$maxAge` judges at some time between them). The scavenge points
 * written until the answer are learned first; a read of them that fails leaves the read unchecked.
 */
const checked = <A extends { readonly _tag: string }>(
  auditor: Auditor,
  what: string,
  read: Effect.Effect<A, StoreFailure>,
  compare: (actual: A, t0: number, t1: number) => string | undefined
) =>
  Effect.gen(function* () {
    const t0 = yield* Clock.currentTimeMillis
    const result = yield* Effect.either(read)
    const t1 = yield* Clock.currentTimeMillis
    if (result._tag === "Left") {
      if (result.left._tag === "Unexpected") return auditor.fail(`${what}: ${result.left.description}`)
      return auditor.trace(`${what} failed`)
    }
    if (!(yield* auditor.learnPoints)) return auditor.trace(`${what} unchecked: the scavenge points did not read`)
    const problem = compare(result.right, t0, t1)
    auditor.trace(`${what} -> ${result.right._tag}`)
    if (problem !== undefined) auditor.fail(`${what}: ${problem}`)
  })

const checkRead = (
  auditor: Auditor,
  what: string,
  request: ReadRequest,
  read: Effect.Effect<ObservedStreamRead, StoreFailure>,
  expected: (t0: number, t1: number) => ReadonlyArray<StreamReadModel>
) =>
  checked(auditor, what, read, (actual, t0, t1) => {
    const pages = expected(t0, t1)
    auditor.coverage.hit(request.direction === "forward" ? "read.forward" : "read.backward")
    markReadResult(auditor, request.stream, pages[0]!._tag, t0, t1)
    return anyAgrees(pages, (page) => compareStreamRead(auditor.model, request, actual, page))
  })

/** Marks what the model says a read met: a missing or deleted stream, or events its metadata hides. */
const markReadResult = (auditor: Auditor, stream: string, tag: string, t0: number, t1: number) => {
  if (tag === "NoStream") return auditor.coverage.hit("read.noStream")
  if (tag === "StreamDeleted") return auditor.coverage.hit("read.streamDeleted")
  const metadata = auditor.model.metadataOf(stream)
  const last = auditor.model.lastEventNumber(stream)
  if (metadata.maxCount !== undefined && last - metadata.maxCount + 1 > 0)
    auditor.coverage.hit("read.truncatedByMaxCount")
  if (metadata.truncateBefore !== undefined && metadata.truncateBefore > 0) auditor.coverage.hit("read.truncatedByTb")
  const [certain, possible] = expiredPrefix(auditor.model, auditor.times, stream, t0, t1)
  if (certain > 0) auditor.coverage.hit("read.expiredByMaxAge")
  if (possible > certain) auditor.coverage.hit("read.maxAgeBoundaryUncertain")
}

const checkEventRead = (
  auditor: Auditor,
  what: string,
  read: Effect.Effect<ObservedEventRead, StoreFailure>,
  expected: (t0: number, t1: number) => ReadonlyArray<EventReadModel>,
  stream: string
) =>
  checked(auditor, what, read, (actual, t0, t1) => {
    const answers = expected(t0, t1)
    auditor.coverage.hit("read.event")
    markReadResult(auditor, stream, answers[0]!._tag, t0, t1)
    return anyAgrees(answers, (answer) => compareEventRead(auditor.model, actual, answer))
  })
