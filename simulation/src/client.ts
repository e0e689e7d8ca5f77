/**
 * A simulated client: issues one operation at a time against the store on the streams it owns, and checks
 * every answer against the reference model at once (an owned stream has exactly one writer, so its
 * outcomes are fully determined by the model; several clients run concurrently on disjoint streams, so
 * group commit batches them together).
 *
 * An answer that is neither a success nor a rule failure (a disk error, the store failing, a crash
 * mid-operation) leaves the operation indeterminate: the client records it as `pending` and leaves that
 * stream alone until the next restart, when the checker finds out whether it was written.
 */
import { Effect } from "effect"
import type { Prng } from "@vellum/platform"
import { type EventStoreService, type EventRecord, type ProposedEvent, type StreamRead, type EventRead } from "@vellum/storage"
import {
  ExpectedAny, ExpectedNoStream, ExpectedStreamExists, LongMax, decideCommit, metastreamOf, outcomeOf, sameOutcome,
  type ModelEvent, type StoreModel, type StreamReadModel, type EventReadModel, type WriteOutcome
} from "./model.js"

export type PendingOp =
  | { readonly kind: "append"; readonly stream: string; readonly expected: number; readonly events: ReadonlyArray<ProposedEvent> }
  | { readonly kind: "hardDelete" | "softDelete"; readonly stream: string; readonly expected: number }

/** Shared by the clients and the checkers: the model, the verdict, and requests to the driver. */
export class Auditor {
  failure: string | undefined
  restartRequested = false
  acknowledged = 0
  indeterminate = 0
  constructor(readonly model: StoreModel, readonly trace: (line: string) => void) {}

  fail(message: string): void {
    if (this.failure === undefined) this.failure = message
  }
}

const hex = (n: number, width: number) => (n >>> 0).toString(16).padStart(width, "0")

export class SimClient {
  readonly streams: ReadonlyArray<string>
  pending: PendingOp | undefined
  private seq = 0
  private lastAppend: { readonly stream: string; readonly expected: number; readonly events: ReadonlyArray<ProposedEvent> } | undefined

  constructor(readonly id: number, readonly prng: Prng, streamCount: number, private readonly maxDataBytes: number) {
    this.streams = Array.from({ length: streamCount }, (_, i) => `c${id}-s${i}`)
  }

  private uuid(): string {
    const p = this.prng
    return `${hex(p.nextU32(), 8)}-${hex(p.nextU32() & 0xffff, 4)}-4${hex(p.nextU32() & 0xfff, 3)}-${hex((p.nextU32() & 0x3fff) | 0x8000, 4)}-${hex(p.nextU32() & 0xffff, 4)}${hex(p.nextU32(), 8)}`
  }

  private newEvents(count: number): Array<ProposedEvent> {
    const seq = this.seq++
    return Array.from({ length: count }, (_, i) => {
      const body = JSON.stringify({ c: this.id, s: seq, i, n: count, pad: "x".repeat(this.prng.int(0, this.maxDataBytes)) })
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

  private metadataBody(): { data: Buffer; isJson: boolean } {
    const r = this.prng.next()
    if (r < 0.35) return { data: Buffer.from(JSON.stringify({ $maxCount: this.prng.int(1, 6) })), isJson: true }
    if (r < 0.65) return { data: Buffer.from(JSON.stringify({ $tb: this.prng.int(0, 8) })), isJson: true }
    if (r < 0.85) return { data: Buffer.from(JSON.stringify({ owner: `c${this.id}`, note: this.prng.int(0, 99) })), isJson: true }
    if (r < 0.93) return { data: Buffer.from("{not json"), isJson: true }
    return { data: Buffer.from("raw bytes"), isJson: false }
  }

  /** One operation; failures of the store's rules are answers, other failures make it indeterminate. */
  step(store: EventStoreService, auditor: Auditor): Effect.Effect<void> {
    const model = auditor.model
    const streams = this.streams.filter((s) => this.pending === undefined || this.pending.stream !== s && this.pending.stream !== metastreamOf(s))
    if (streams.length === 0) return Effect.void
    const stream = this.prng.pick(streams)
    const r = this.prng.next()
    const tag = `c${this.id}`

    const write = (
      op: PendingOp,
      run: Effect.Effect<WriteOutcome, unknown>,
      expect: () => ReadonlyArray<WriteOutcome>,
      apply: (outcome: WriteOutcome) => void
    ) =>
      Effect.gen(this, function*() {
        this.pending = op
        const result = yield* Effect.either(run)
        if (result._tag === "Left") {
          const e = result.left as { readonly _tag?: string; readonly message?: string }
          auditor.indeterminate++
          auditor.trace(`${tag} ${op.kind} ${op.stream} indeterminate ${e._tag}`)
          if (e._tag === "StorageFailed") auditor.restartRequested = true
          return
        }
        this.pending = undefined
        const outcome = result.right
        auditor.trace(`${tag} ${op.kind} ${op.stream} exp=${op.expected} -> ${JSON.stringify(outcome)}`)
        const allowed = expect()
        if (!allowed.some((o) => sameOutcome(o, outcome))) {
          auditor.fail(`${tag} ${op.kind} to ${op.stream} with expected version ${op.expected}: got ${JSON.stringify(outcome)}, the model allows ${JSON.stringify(allowed)}`)
          return
        }
        auditor.acknowledged++
        apply(outcome)
      })

    const appendOp = (target: string, expected: number, events: ReadonlyArray<ProposedEvent>, run: Effect.Effect<WriteOutcome, unknown>) => {
      const possible = model.possibleDecisions(target, expected, events.map((e) => e.eventId))
      return write({ kind: "append", stream: target, expected, events }, run,
        () => possible.map((p) => outcomeOf(p.decision, events.length)),
        (outcome) => {
          const consistent = possible.filter((p) => sameOutcome(outcomeOf(p.decision, events.length), outcome))
          model.learnCache(consistent)
          model.applyAppend(target, consistent[0]!.decision, events, 0)
        })
    }

    const asOutcome = (effect: Effect.Effect<{ readonly firstEventNumber: number; readonly lastEventNumber: number; readonly idempotent: boolean }, { readonly _tag: string }>): Effect.Effect<WriteOutcome, unknown> =>
      effect.pipe(
        Effect.map((a): WriteOutcome => ({ _tag: "Appended", first: a.firstEventNumber, last: a.lastEventNumber, idempotent: a.idempotent })),
        Effect.catchIf((e) => e._tag === "WrongExpectedVersion", (e) => Effect.succeed<WriteOutcome>({ _tag: "WrongExpectedVersion", current: (e as unknown as { currentVersion: number }).currentVersion })),
        Effect.catchIf((e) => e._tag === "StreamDeleted", () => Effect.succeed<WriteOutcome>({ _tag: "StreamDeleted" }))
      )

    if (r < 0.42) {
      const expected = this.pickExpected(model.lastEventNumber(stream))
      const events = this.newEvents(this.prng.int(1, 3))
      this.lastAppend = { stream, expected, events }
      return appendOp(stream, expected, events, asOutcome(store.append(stream, expected, events)))
    }
    if (r < 0.5 && this.lastAppend !== undefined && streams.includes(this.lastAppend.stream)) {
      const { stream: s, expected, events } = this.lastAppend
      return appendOp(s, expected, events, asOutcome(store.append(s, expected, events)))
    }
    if (r < 0.58) {
      const meta = metastreamOf(stream)
      const expected = this.prng.chance(0.7) ? model.lastEventNumber(meta) : ExpectedAny
      const body = this.metadataBody()
      const events = [{ eventId: this.uuid(), eventType: "$metadata", isJson: body.isJson, data: body.data, metadata: Buffer.alloc(0) }]
      return appendOp(meta, expected, events,
        asOutcome(store.setStreamMetadata(stream, expected, body.data, { eventId: events[0]!.eventId, isJson: body.isJson })))
    }
    if (r < 0.61) {
      const hard = this.prng.chance(0.25)
      const expected = this.prng.chance(0.7) ? model.lastEventNumber(stream) : ExpectedAny
      const kind = hard ? "hardDelete" : "softDelete"
      const run = asOutcome(Effect.map(store.deleteStream(stream, expected, hard), () => ({ firstEventNumber: 0, lastEventNumber: 0, idempotent: false })))
      return write({ kind, stream, expected }, run,
        () => {
          // Peek at the model's answer without applying it (applied below once the store agreed).
          return [peekDelete(model, stream, expected, hard)]
        },
        (outcome) => {
          if (outcome._tag !== "Appended") return
          if (hard) model.hardDelete(stream, expected, 0)
          else model.softDelete(stream, expected, 0)
        })
    }
    return this.read(store, auditor, stream, r)
  }

  private read(store: EventStoreService, auditor: Auditor, stream: string, r: number): Effect.Effect<void> {
    const model = auditor.model
    const last = Math.max(0, Math.min(model.lastEventNumber(stream), 50))
    const count = this.prng.int(1, 6)
    if (r < 0.8) {
      const from = this.prng.int(0, last + 2)
      return checkRead(auditor, `c${this.id} readForward ${stream} ${from} ${count}`, store.readStreamForward(stream, from, count), () => model.readForward(stream, from, count))
    }
    if (r < 0.9) {
      const from = this.prng.chance(0.3) ? -1 : this.prng.int(0, last + 2)
      return checkRead(auditor, `c${this.id} readBackward ${stream} ${from} ${count}`, store.readStreamBackward(stream, from, count), () => model.readBackward(stream, from, count))
    }
    const n = this.prng.chance(0.2) ? -1 : this.prng.int(0, last + 1)
    return checkEventRead(auditor, `c${this.id} readEvent ${stream} ${n}`, store.readEvent(stream, n), () => model.readEvent(stream, n))
  }
}

/** The model's answer to a delete, without applying it (applied once the store agreed). */
const peekDelete = (model: StoreModel, stream: string, expected: number, hard: boolean): WriteOutcome => {
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

/** Compares one stored event with the model's; learns ids the server chose. */
export const compareEvent = (model: StoreModel, actual: EventRecord, expected: ModelEvent): string | undefined => {
  if (actual.eventNumber !== expected.eventNumber) return `event number ${actual.eventNumber} where the model has ${expected.eventNumber}`
  if (expected.eventId === undefined) model.learnEventId(expected, actual.eventId)
  else if (expected.eventId !== actual.eventId) return `event ${expected.stream}#${expected.eventNumber} has id ${actual.eventId}, the model ${expected.eventId}`
  if (actual.eventType !== expected.eventType) return `event ${expected.stream}#${expected.eventNumber} has type ${actual.eventType}, the model ${expected.eventType}`
  if (!Buffer.from(expected.data).equals(actual.data)) return `event ${expected.stream}#${expected.eventNumber} data differs: ${actual.data.toString()} vs ${Buffer.from(expected.data).toString()}`
  return undefined
}

/** Compares a stream read with the model; read failures caused by injected faults are not checked. */
export const compareStreamRead = (model: StoreModel, actual: StreamRead, expected: StreamReadModel): string | undefined => {
  if (actual._tag !== expected._tag) return `read gave ${actual._tag}, the model ${expected._tag}`
  if (actual._tag === "NoStream" && expected._tag === "NoStream" && actual.lastEventNumber !== expected.lastEventNumber) {
    return `NoStream with last ${actual.lastEventNumber}, the model ${expected.lastEventNumber}`
  }
  if (actual._tag === "Success" && expected._tag === "Success") {
    const fields = ["nextEventNumber", "lastEventNumber", "isEndOfStream"] as const
    for (const f of fields) if (actual[f] !== expected[f]) return `${f} is ${actual[f]}, the model says ${expected[f]}`
    if (actual.events.length !== expected.events.length) {
      return `${actual.events.length} events [${actual.events.map((e) => e.event?.eventNumber)}] where the model has ${expected.events.length} [${expected.events.map((e) => e.eventNumber)}]`
    }
    for (let i = 0; i < actual.events.length; i++) {
      const problem = compareEvent(model, actual.events[i]!.event!, expected.events[i]!)
      if (problem !== undefined) return problem
    }
  }
  return undefined
}

const checkRead = (auditor: Auditor, what: string, read: Effect.Effect<StreamRead, unknown>, expected: () => StreamReadModel) =>
  Effect.flatMap(Effect.either(read), (result) => Effect.sync(() => {
    if (result._tag === "Left") return auditor.trace(`${what} failed`)
    const problem = compareStreamRead(auditor.model, result.right, expected())
    auditor.trace(`${what} -> ${result.right._tag}`)
    if (problem !== undefined) auditor.fail(`${what}: ${problem}`)
  }))

const checkEventRead = (auditor: Auditor, what: string, read: Effect.Effect<EventRead, unknown>, expected: () => EventReadModel) =>
  Effect.flatMap(Effect.either(read), (result) => Effect.sync(() => {
    if (result._tag === "Left") return auditor.trace(`${what} failed`)
    const actual = result.right
    const model = expected()
    auditor.trace(`${what} -> ${actual._tag}`)
    if (actual._tag !== model._tag) return auditor.fail(`${what}: got ${actual._tag}, the model ${model._tag}`)
    if (actual._tag === "Success" && model._tag === "Success") {
      const problem = compareEvent(auditor.model, actual.event.event!, model.event)
      if (problem !== undefined) auditor.fail(`${what}: ${problem}`)
    }
  }))
