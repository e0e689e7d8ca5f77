/**
 * An in-memory `ReplicaLog` for testing the cluster's protocols apart from storage: the log is a list of
 * units (an epoch or a client write of a few bytes), each at a position, framed on the wire as one JSON
 * line per unit. Client writes go one at a time through the commit gate while the node leads, as the
 * store's writer does. A "crash" keeps everything written (the fake's disk never loses a byte).
 */
import { Effect } from "effect"
import {
  InvalidRequest,
  StorageFailed,
  type CommitGate,
  type EpochRef,
  type RawSlice,
  type ReplicaLog
} from "@vellum/storage"

export interface Unit {
  readonly position: number
  readonly end: number
  readonly kind: "epoch" | "write"
  readonly epochNumber?: number
  readonly epochId?: string
  readonly payload: string
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

export class FakeReplicaLog implements ReplicaLog {
  readonly chunkSize = 1 << 30
  units: Array<Unit> = []
  private committedAt = 0
  private gate: CommitGate | undefined
  private busy = false
  private nextEpochId = 0

  constructor(readonly name: string) {}

  writerCheckpoint = () => (this.units.length === 0 ? 0 : this.units[this.units.length - 1]!.end)
  committed = () => this.committedAt

  epochs = (max: number) =>
    Effect.sync(() => {
      const out: Array<EpochRef> = []
      for (let i = this.units.length - 1; i >= 0 && out.length < max; i--) {
        const u = this.units[i]!
        if (u.kind === "epoch") out.push({ epochNumber: u.epochNumber!, position: u.position, epochId: u.epochId! })
      }
      return out
    })

  private push(kind: Unit["kind"], payload: string, epochNumber?: number): Unit {
    const position = this.writerCheckpoint()
    const size = encoder.encode(payload).length + 10
    const unit: Unit =
      kind === "epoch"
        ? { position, end: position + size, kind, payload, epochNumber, epochId: `${this.name}-e${this.nextEpochId++}` }
        : { position, end: position + size, kind, payload }
    this.units.push(unit)
    return unit
  }

  /** A write through the gate; fails NotLeader when not leading, CommitTimeout when the gate fails. */
  private gated(kind: Unit["kind"], payload: string, epochNumber?: number) {
    return Effect.gen(this, function* () {
      const gate = this.gate
      if (gate === undefined || this.busy) return yield* Effect.fail("NotLeader" as const)
      this.busy = true
      const unit = this.push(kind, payload, epochNumber)
      const passed = yield* Effect.either(gate(unit.end))
      this.busy = false
      if (passed._tag === "Left") return yield* Effect.fail("CommitTimeout" as const)
      this.committedAt = Math.max(this.committedAt, unit.end)
      return unit
    })
  }

  append = (payload: string) => this.gated("write", payload)

  /** A restart: what was in memory (leading, a write in flight) is gone; the log stays. */
  restart(): void {
    this.gate = undefined
    this.busy = false
  }

  lead = (term: number, _leader: string, gate: CommitGate) =>
    Effect.gen(this, function* () {
      const last = (yield* this.epochs(1))[0]
      if (last !== undefined && last.epochNumber >= term) return yield* Effect.dieMessage("stale term")
      this.gate = gate
      this.busy = false
      const unit = yield* Effect.mapError(
        this.gated("epoch", `epoch ${term}`, term),
        () => new InvalidRequest({ message: "no quorum" })
      )
      return { epochNumber: term, position: unit.position, epochId: unit.epochId! }
    }) as unknown as ReturnType<ReplicaLog["lead"]>

  stopLeading = Effect.sync(() => {
    this.gate = undefined
  })

  readRaw = (from: number, maxBytes: number) =>
    Effect.sync((): RawSlice | undefined => {
      const start = this.units.findIndex((u) => u.position === from)
      if (start < 0) return undefined
      const taken: Array<Unit> = []
      let size = 0
      for (let i = start; i < this.units.length && (taken.length === 0 || size < maxBytes); i++) {
        taken.push(this.units[i]!)
        size += this.units[i]!.end - this.units[i]!.position
      }
      return {
        position: from,
        end: taken[taken.length - 1]!.end,
        bytes: encoder.encode(taken.map((u) => JSON.stringify(u)).join("\n")),
        completesChunk: false
      }
    })

  /** The fake log is never scavenged: readRaw never gives a chunk file to install. */
  installChunk: ReplicaLog["installChunk"] = () => Effect.die("the fake log has no scavenged chunks")

  appendRaw = (slice: RawSlice) =>
    Effect.suspend(() => {
      if (slice.position !== this.writerCheckpoint())
        return Effect.fail(
          new InvalidRequest({ message: `slice at ${slice.position}, log at ${this.writerCheckpoint()}` })
        )
      const units = decoder
        .decode(slice.bytes)
        .split("\n")
        .map((line) => JSON.parse(line) as Unit)
      let at = slice.position
      for (const u of units) {
        if (u.position !== at) return Effect.fail(new InvalidRequest({ message: "a gap in the slice" }))
        at = u.end
      }
      this.units.push(...units)
      return Effect.void as Effect.Effect<void, StorageFailed | InvalidRequest>
    })

  commitTo = (position: number) =>
    Effect.sync(() => {
      this.committedAt = Math.max(this.committedAt, Math.min(position, this.writerCheckpoint()))
    })

  truncate = (position: number) =>
    Effect.suspend(() => {
      if (position < this.committedAt) return Effect.dieMessage(`${this.name}: truncating committed data`)
      this.units = this.units.filter((u) => u.position < position)
      if (this.writerCheckpoint() !== position) return Effect.dieMessage(`${this.name}: truncation inside a unit`)
      return Effect.void
    })

  /** The committed units' payloads, in order. */
  committedPayloads(): Array<string> {
    return this.units.filter((u) => u.end <= this.committedAt).map((u) => u.payload)
  }
}
