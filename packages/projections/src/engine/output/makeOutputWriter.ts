/**
 * The output writer (see ../OutputWriter.ts): each stream written to has a lane (streamLane.ts) holding the
 * items' writes for it in order; a lane runs one step at a time (open the stream, skip what was written
 * before a restart, or append a batch of whole items), and lanes of different streams run side by side, so
 * their appends reach the storage writer together and share its flush. Steps are fibers of the writer's
 * scope: closing the scope stops the writer wherever it is, as a crash would.
 */
import { Cause, Deferred, Effect, Exit, FiberSet } from "effect"
import { assert } from "@vellum/platform"
import { randomUuid, type EventStoreService } from "@vellum/storage"
import { checkpointTagText, compareCheckpointTags, type CheckpointTag } from "../../persisted/checkpointTag.js"
import { encodeEmittedMetadata } from "../../persisted/emittedMetadata.js"
import { emittedStreamsStream } from "../../persisted/streamNames.js"
import type { MakeOutputWriter, OutputFault, OutputWriter, WriteCause } from "../OutputWriter.js"
import type { EmittedWrite } from "../ProjectionHandler.js"
import { openStream } from "./openStream.js"
import { outputFault, withStorageRetry } from "./storageFailures.js"
import { nextBatch, streamLane, writesByStream, type QueuedItem, type StreamLane } from "./streamLane.js"
import { readTrackedStreams, streamTrackedWrite } from "./trackedStreams.js"
import { lastNumberStamped, writtenStamps } from "./writtenBefore.js"

export interface OutputWriterDeps {
  /** Where streams are read. */
  readonly store: EventStoreService
  /** Where the output is appended (a node's leader-only store: a node that stops leading refuses). */
  readonly writer: EventStoreService
  /**
   * Streams kept open while idle, at most (default 1000): past it, a stream whose lane has nothing left to do
   * is forgotten, and read again before its next write, so a projection writing to many streams holds few.
   */
  readonly idleStreamsKept?: number
}

export const makeOutputWriter =
  (deps: OutputWriterDeps): MakeOutputWriter =>
  (spec) =>
    Effect.gen(function* () {
      const fibers = yield* FiberSet.make<void, never>()
      // An append is written as one unit, which must fit in a chunk: a quarter of one leaves room for the rest.
      const maxAppendBytes = Math.max(1, Math.floor(deps.writer.config.chunkSize / 4))
      const run = yield* FiberSet.runtime(fibers)<never>()
      let closed = false
      // Added after the fiber set, so it runs first: a step ending as the scope closes starts nothing new.
      // A flush still waiting then fails rather than waiting forever.
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          closed = true
          stop(outputFault("The projection's output writer was stopped."))
        })
      )

      const catalogue = emittedStreamsStream(spec.name)
      const lanes = new Map<string, StreamLane>()
      /** Lanes with queued items and no step running. */
      const waiting = new Set<StreamLane>()
      /** By item: how many of its lanes still have its writes to make durable (items with none are absent). */
      const outstanding = new Map<number, number>()
      const flushes: Array<{ readonly through: number; readonly done: Deferred.Deferred<void, OutputFault> }> = []
      const trackedThisRun = new Set<string>()
      let lastSeq = 0
      let lastTag: CheckpointTag | undefined
      let pending = 0
      let running = 0
      let appending = 0
      let fault: OutputFault | undefined

      const idleStreamsKept = deps.idleStreamsKept ?? 1000
      /** Nothing queued, under way or remembered for a link: forgetting it loses nothing a read cannot give back. */
      const isIdle = (lane: StreamLane): boolean =>
        !lane.isCatalogue && lane.queue.length === 0 && lane.references.size === 0 && lane.numbers.size === 0

      const laneOf = (stream: string): StreamLane => {
        let lane = lanes.get(stream)
        if (lane === undefined) {
          lane = streamLane(stream, stream === catalogue)
          lanes.set(stream, lane)
        }
        return lane
      }

      const stop = (reason: OutputFault): void => {
        if (fault !== undefined) return
        fault = reason
        for (const flush of flushes.splice(0)) Deferred.unsafeDone(flush.done, Exit.fail(reason))
      }

      const settleFlushes = (): void => {
        const lowest = outstanding.keys().next()
        const durableThrough = lowest.done ? lastSeq : lowest.value - 1
        for (let i = flushes.length - 1; i >= 0; i--) {
          const flush = flushes[i]!
          if (flush.through > durableThrough) continue
          flushes.splice(i, 1)
          Deferred.unsafeDone(flush.done, Exit.void)
        }
      }

      /** An item's writes to a lane are durable (or were already there). */
      const done = (item: QueuedItem): void => {
        pending -= item.writes.length
        const left = outstanding.get(item.seq)! - 1
        if (left === 0) outstanding.delete(item.seq)
        else outstanding.set(item.seq, left)
        settleFlushes()
      }

      const linkTargets = (item: QueuedItem): ReadonlyArray<string> =>
        item.writes.flatMap((write) => (write.linkToWrittenIn === undefined ? [] : [write.linkToWrittenIn]))

      const linksResolved = (item: QueuedItem): boolean =>
        linkTargets(item).every((target) => laneOf(target).numbers.has(item.seq))

      /** A link no longer needs its target's number (resolved, or its item skipped). */
      const release = (target: string, seq: number): void => {
        const lane = laneOf(target)
        const left = lane.references.get(seq)! - 1
        if (left > 0) return void lane.references.set(seq, left)
        lane.references.delete(seq)
        lane.numbers.delete(seq)
      }

      const canStep = (lane: StreamLane): boolean => {
        const first = lane.queue[0]
        if (!lane.opened || lane.lastTag !== undefined) return true
        return first !== undefined && linksResolved(first)
      }

      const kick = (): void => {
        // A snapshot: a step may end (and its lane wait again) before `run` returns.
        for (const lane of [...waiting]) {
          if (fault !== undefined || closed) return
          if (spec.maxAllowedWritesInFlight > 0 && running >= spec.maxAllowedWritesInFlight) return
          // A nested kick (from a step that ran at once) may have started it already.
          if (!waiting.has(lane) || !canStep(lane)) continue
          assert(!lane.busy, "one step at a time per stream")
          waiting.delete(lane)
          lane.busy = true
          running++
          run(laneStep(lane))
        }
      }

      const counted = <A>(append: Effect.Effect<A, OutputFault>): Effect.Effect<A, OutputFault> =>
        Effect.acquireUseRelease(
          Effect.sync(() => appending++),
          () => append,
          () => Effect.sync(() => appending--)
        )

      const open = (lane: StreamLane) =>
        Effect.gen(function* () {
          const head = yield* openStream(
            { store: deps.store, writer: deps.writer, appending: counted },
            lane.stream,
            spec.version,
            lane.isCatalogue
          )
          if (lane.isCatalogue) lane.tracked = yield* readTrackedStreams(deps.store, lane.stream)
          lane.version = head.version
          lane.lastTag = head.lastTag
          lane.opened = true
        })

      /** Drops the items at or before the last position this epoch wrote: they are in the stream already. */
      const skipWrittenBefore = (lane: StreamLane) =>
        Effect.gen(function* () {
          while (lane.lastTag !== undefined && lane.queue.length > 0) {
            const item = lane.queue[0]!
            const order = compareCheckpointTags(item.cause.tag, lane.lastTag)
            if (order === undefined)
              return yield* Effect.fail(
                outputFault(
                  `The position ${checkpointTagText(item.cause.tag)} of a write to '${lane.stream}' cannot be ordered after the position of its last event (${checkpointTagText(lane.lastTag)}).`
                )
              )
            if (order > 0) {
              lane.lastTag = undefined
              return
            }
            if (lane.references.has(item.seq)) {
              lane.stamps ??= writtenStamps(lane.version)
              const number = yield* lastNumberStamped(deps.store, lane.stream, lane.stamps, item.cause.tag)
              if (number === undefined)
                return yield* Effect.fail(
                  outputFault(
                    `The events written to '${lane.stream}' at ${checkpointTagText(item.cause.tag)} before the restart are not there.`
                  )
                )
              lane.numbers.set(item.seq, number)
            }
            lane.queue.shift()
            for (const target of linkTargets(item)) release(target, item.seq)
            done(item)
            kick()
          }
        })

      const dataOf = (write: EmittedWrite, seq: number): string => {
        if (write.linkToWrittenIn === undefined) return write.data
        const number = laneOf(write.linkToWrittenIn).numbers.get(seq)!
        release(write.linkToWrittenIn, seq)
        return `${number}@${write.linkToWrittenIn}`
      }

      /** Appends the next batch of whole items, with the exact expected version. */
      const appendBatch = (lane: StreamLane) =>
        Effect.gen(function* () {
          // Other fibers run between this step's skip and here: what the runner queued meanwhile may still be at or
          // before the stream's last written position. Left for the next step, which skips it first (checked in
          // the same synchronous stretch as the batch is taken, so nothing can be queued in between).
          const first = lane.queue[0]
          if (
            first !== undefined &&
            lane.lastTag !== undefined &&
            compareCheckpointTags(first.cause.tag, lane.lastTag) !== 1
          )
            return
          const batch = nextBatch(lane.queue, spec.maxWriteBatchLength, maxAppendBytes, linksResolved, (item) =>
            lane.tracked === undefined ? item.writes : item.writes.filter((write) => !lane.tracked!.has(write.data))
          )
          if (batch.length === 0) return
          lane.queue.splice(0, batch.length)
          const expectedVersion = lane.version
          const events = []
          for (const { item, writes } of batch) {
            for (const write of writes) {
              lane.tracked?.add(write.data)
              events.push({
                eventId: yield* randomUuid,
                eventType: write.eventType,
                isJson: write.isJson,
                data: Buffer.from(dataOf(write, item.seq), "utf8"),
                metadata: Buffer.from(
                  encodeEmittedMetadata(item.cause.tag, spec.version, {
                    extra: write.extraMetadata,
                    causedBy: item.cause.eventId,
                    correlationId: item.cause.correlationId
                  }),
                  "utf8"
                )
              })
            }
            lane.version += writes.length
            // The expected version is exact, so these numbers are the ones the events get (or the run faults).
            if (lane.references.has(item.seq)) lane.numbers.set(item.seq, lane.version)
          }
          kick()
          if (events.length > 0)
            yield* counted(withStorageRetry(lane.stream, deps.writer.append(lane.stream, expectedVersion, events)))
          for (const { item } of batch) done(item)
        })

      const laneStep = (lane: StreamLane): Effect.Effect<void> =>
        Effect.gen(function* () {
          if (!lane.opened) yield* open(lane)
          yield* skipWrittenBefore(lane)
          yield* appendBatch(lane)
        }).pipe(
          Effect.catchAllCause((cause) =>
            Effect.sync(() => {
              if (Cause.isInterruptedOnly(cause)) return
              const failure = Cause.failureOption(cause)
              stop(
                failure._tag === "Some"
                  ? failure.value
                  : outputFault(`Writing to '${lane.stream}' failed: ${Cause.pretty(cause)}`)
              )
            })
          ),
          Effect.ensuring(
            Effect.sync(() => {
              lane.busy = false
              running--
              if (lane.queue.length > 0) waiting.add(lane)
              else if (lanes.size > idleStreamsKept && isIdle(lane)) lanes.delete(lane.stream)
              kick()
            })
          )
        )

      const enqueue = (cause: WriteCause, writes: ReadonlyArray<EmittedWrite>): void => {
        assert(
          lastTag === undefined || compareCheckpointTags(cause.tag, lastTag) === 1,
          `writes are queued in the order of their causes: ${checkpointTagText(cause.tag)} after ${lastTag === undefined ? "" : checkpointTagText(lastTag)}`
        )
        lastTag = cause.tag
        const seq = ++lastSeq
        if (fault !== undefined || closed) return
        const byStream = writesByStream(writes)
        assert(!byStream.has(catalogue), `only the writer itself writes to ${catalogue}`)
        for (const write of writes) {
          const target = write.linkToWrittenIn
          if (target === undefined) continue
          assert(target !== write.stream && byStream.has(target), `a result link points at a write of its own item`)
          assert(
            byStream.get(target)!.every((targetWrite) => targetWrite.linkToWrittenIn === undefined),
            "a result link points at a stream without links of the same item"
          )
          const lane = laneOf(target)
          lane.references.set(seq, (lane.references.get(seq) ?? 0) + 1)
        }
        if (spec.trackEmittedStreams) {
          const untracked = [...byStream.keys()].filter((stream) => !trackedThisRun.has(stream))
          for (const stream of untracked) trackedThisRun.add(stream)
          if (untracked.length > 0)
            byStream.set(
              catalogue,
              untracked.map((stream) => streamTrackedWrite(catalogue, stream))
            )
        }
        if (byStream.size === 0) return settleFlushes()
        outstanding.set(seq, byStream.size)
        for (const [stream, streamWrites] of byStream) {
          const lane = laneOf(stream)
          lane.queue.push({ seq, cause, writes: streamWrites })
          pending += streamWrites.length
          if (!lane.busy) waiting.add(lane)
        }
        kick()
      }

      const flush: Effect.Effect<void, OutputFault> = Effect.suspend(() => {
        if (fault !== undefined) return Effect.fail(fault)
        const through = lastSeq
        const lowest = outstanding.keys().next()
        if (lowest.done || lowest.value > through) return Effect.void
        return Effect.flatMap(Deferred.make<void, OutputFault>(), (done) => {
          flushes.push({ through, done })
          return Deferred.await(done)
        })
      })

      const writer: OutputWriter = {
        enqueue,
        flush,
        pendingEvents: () => pending,
        writesInFlight: () => appending,
        fault: () => fault
      }
      return writer
    })
