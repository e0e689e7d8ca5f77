/**
 * Builds logs for scavenging tests (after upstream's scenario DSL): streams,
 * metadata, tombstones, soft deletes, links, timestamps and scavenge points, as decoded `LogRecord`s with
 * the positions Vellum's writer would give them — records framed by `framedLength`, one call's records
 * never straddling a chunk, and a scavenge point closing its chunk. Property tests of the real
 * scavenger write the same records into a real store and compare against `scavengeModel`.
 */
import {
  DeletedStreamNumber,
  EventFlags,
  EventTypes,
  framedLength,
  LongMaxValueText,
  metastreamOf,
  RecordKind,
  type EventRecord,
  type LogRecord,
  type NewRecord
} from "@vellum/storage"
import type { ScavengePointSpec } from "./types.js"

export interface LogBuilderOptions {
  readonly chunkSize: number
  /** Time of records that give none (µs since the Unix epoch); change it with `at`. Default 0. */
  readonly startMicros?: number
}

export interface EventOptions {
  readonly type?: string
  /** An object or array is written as JSON; a string or bytes as they are. */
  readonly data?: unknown
  readonly isJson?: boolean
  readonly createdMicros?: number
  /** Defaults to the stream's next number (from 0). */
  readonly eventNumber?: number
}

export interface ScavengePointOptions {
  readonly effectiveNowMicros?: number
  readonly threshold?: number
  readonly timeMicros?: number
}

type Unpositioned<R> = R extends LogRecord ? Omit<R, "logPosition"> : never

const toBytes = (data: unknown): Buffer =>
  data === undefined
    ? Buffer.alloc(0)
    : Buffer.isBuffer(data)
      ? data
      : data instanceof Uint8Array
        ? Buffer.from(data)
        : typeof data === "string"
          ? Buffer.from(data, "utf8")
          : Buffer.from(JSON.stringify(data), "utf8")

/** Deterministic, well-formed ids: the n-th record gets `00000000-0000-4000-8000-<n as 12 hex digits>`. */
const uuid = (n: number): string => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`

export class LogBuilder {
  private readonly out: Array<LogRecord> = []
  private readonly nextNumber = new Map<string, number>()
  private chunk = 0
  private used = 0
  private clock: number
  private ids = 0
  private scavengePoints = 0

  constructor(private readonly options: LogBuilderOptions) {
    this.clock = options.startMicros ?? 0
  }

  get chunkSize(): number {
    return this.options.chunkSize
  }

  /** The records so far, in position order. */
  get records(): ReadonlyArray<LogRecord> {
    return this.out
  }

  /** The log position the next record would get if it fits. */
  get position(): number {
    return this.chunk * this.options.chunkSize + this.used
  }

  /** Sets the time of later records that give none. */
  at(micros: number): this {
    this.clock = micros
    return this
  }

  /** Highest event number written to `stream` so far (−1 if none; tombstones excluded). */
  lastEventNumber(stream: string): number {
    return (this.nextNumber.get(stream) ?? 0) - 1
  }

  /** One atomic append of `count` events (or the given ones); returns their positions. */
  append(stream: string, events: number | ReadonlyArray<EventOptions>, common: EventOptions = {}): Array<number> {
    const list =
      typeof events === "number"
        ? Array.from({ length: events }, () => common)
        : events.map((e) => ({ ...common, ...e }))
    return this.unit(list.map((e) => this.eventRecord(stream, e, 0)))
  }

  event(stream: string, options: EventOptions = {}): number {
    return this.append(stream, [options])[0]!
  }

  /** A metadata record in `$$stream` (type `$metadata`, JSON unless told otherwise). */
  metadata(stream: string, metadata: unknown, options: EventOptions = {}): number {
    return this.event(metastreamOf(stream), { type: EventTypes.Metadata, isJson: true, ...options, data: metadata })
  }

  /** Soft delete: metadata `{"$tb": long.MaxValue}`, as the writer writes it. */
  softDelete(stream: string, options: EventOptions = {}): number {
    return this.metadata(stream, `{"$tb":${LongMaxValueText}}`, options)
  }

  /** Hard delete: a tombstone with event number long.MaxValue (DeletedStreamNumber). */
  tombstone(stream: string, options: Omit<EventOptions, "eventNumber"> = {}): number {
    const record = this.eventRecord(
      stream,
      { type: EventTypes.StreamDeleted, ...options, eventNumber: DeletedStreamNumber },
      EventFlags.Tombstone
    )
    return this.unit([record])[0]!
  }

  /** A link event (`$>`, data `"{n}@{stream}"`) in `stream`. */
  link(
    stream: string,
    target: { readonly stream: string; readonly eventNumber: number },
    options: EventOptions = {}
  ): number {
    return this.event(stream, {
      ...options,
      type: EventTypes.LinkTo,
      isJson: false,
      data: `${target.eventNumber}@${target.stream}`
    })
  }

  epoch(timeMicros: number = this.clock): number {
    const epochNumber = this.out.filter((r) => r.kind === RecordKind.Epoch).length
    const prev = [...this.out].reverse().find((r) => r.kind === RecordKind.Epoch)
    return this.unit([
      {
        kind: RecordKind.Epoch,
        epochNumber,
        prevEpochPosition: prev?.logPosition ?? -1,
        epochId: uuid(this.ids++),
        leaderInstanceId: uuid(0),
        timeMicros
      }
    ])[0]!
  }

  commit(timeMicros: number = this.clock): number {
    return this.unit([
      {
        kind: RecordKind.Commit,
        transactionPosition: this.position,
        firstEventNumber: 0,
        correlationId: uuid(this.ids++),
        timeMicros
      }
    ])[0]!
  }

  /** Writes a scavenge point, which closes its chunk; returns it as the model's input wants it. */
  scavengePoint(options: ScavengePointOptions = {}): ScavengePointSpec {
    const timeMicros = options.timeMicros ?? this.clock
    const effectiveNowMicros = options.effectiveNowMicros ?? timeMicros
    const threshold = options.threshold ?? 0
    const position = this.unit(
      [
        {
          kind: RecordKind.ScavengePoint,
          number: this.scavengePoints++,
          eventId: uuid(this.ids++),
          effectiveNowMicros,
          threshold,
          timeMicros
        }
      ],
      true
    )[0]!
    return { position, effectiveNowMicros, threshold }
  }

  /** Starts a new chunk (as when a chunk fills up). No-op on an empty chunk. */
  completeChunk(): this {
    if (this.used > 0) this.nextChunk()
    return this
  }

  private nextChunk(): void {
    this.chunk += 1
    this.used = 0
  }

  private eventRecord(stream: string, options: EventOptions, extraFlags: number): Unpositioned<EventRecord> {
    const eventNumber = options.eventNumber ?? this.nextNumber.get(stream) ?? 0
    if (extraFlags === 0) this.nextNumber.set(stream, Math.max(this.nextNumber.get(stream) ?? 0, eventNumber + 1))
    const type = options.type ?? "event"
    const isJson =
      options.isJson ??
      (options.data === undefined || (typeof options.data === "object" && !(options.data instanceof Uint8Array)))
    return {
      kind: RecordKind.Event,
      flags: (isJson ? EventFlags.Json : 0) | (type === EventTypes.LinkTo ? EventFlags.Link : 0) | extraFlags,
      eventNumber,
      createdMicros: options.createdMicros ?? this.clock,
      eventId: uuid(this.ids++),
      stream,
      eventType: type,
      data: toBytes(options.data),
      metadata: Buffer.alloc(0)
    }
  }

  /** Lays out one write unit the way the writer does; returns the records' positions. */
  private unit(records: ReadonlyArray<Unpositioned<LogRecord>>, completeChunkAfter = false): Array<number> {
    const size = records.reduce((sum, r) => sum + framedLength(r as NewRecord), 0)
    if (size > this.options.chunkSize)
      throw new RangeError(`a write of ${size} bytes does not fit in a chunk of ${this.options.chunkSize} bytes`)
    if (this.used + size > this.options.chunkSize) this.nextChunk()
    const positions: Array<number> = []
    records.forEach((record, i) => {
      const logPosition = this.position
      positions.push(logPosition)
      this.used += framedLength(record as NewRecord)
      const first = i === 0 ? EventFlags.BatchBegin : 0
      const last = i === records.length - 1 ? EventFlags.BatchEnd : 0
      this.out.push(
        record.kind === RecordKind.Event
          ? { ...record, logPosition, flags: record.flags | first | last }
          : ({ ...record, logPosition } as LogRecord)
      )
    })
    if (completeChunkAfter || this.used === this.options.chunkSize) this.nextChunk()
    return positions
  }
}
