/**
 * The writer: one fiber that turns queued write commands into durable log batches (group commit).
 *
 * Each round takes every waiting command (up to a limit) and plans each one in order against a RoundView
 * — committed state plus the round's earlier decisions, so two appends to one stream in one batch see each
 * other. Planning is plain synchronous code (planner.ts); only a cache miss costs an Effect (a read), after
 * which the command is planned again. All accepted records are encoded into one prepared batch, written
 * with one write and one sync per chunk touched, the writer checkpoint is moved and synced, the batch is
 * indexed, and only then is every command answered — failures too, so no answer ever depends on a batch
 * that might still fail. A batch whose write fails is answered as failed (its event ids are forgotten:
 * they were never written); the writer then refuses every command at once with that StorageFailed while it
 * retries `TransactionLog.recover` on a backoff (a full disk frees up, a disk comes back), and takes
 * commands again once the log is back where the last acknowledged batch left it. The node counts as
 * degraded (`refused()`) from the first failed write until a write succeeds again — on a disk that stays
 * full, recovery succeeds and the next write fails again — and that is what is logged, once each way.
 *
 * A clustered store's writer (`leadership` given) takes client commands only while its node leads (else
 * NotLeader at once), and a durable round is not yet committed: it waits for the cluster's quorum gate,
 * then everything from the committed position to the round's end is indexed and the round is answered.
 * While rounds wait, the next ones are planned (against committed state plus the waiting rounds'
 * decisions) and written, up to a bound, and each is answered only once its own gate passes, in log order
 * (RoundPipeline.ts). A lost quorum answers the waiting rounds CommitTimeout (outcome unknown), drops
 * their decisions, and the writer refuses again. Commands waiting longer than the commit timeout are
 * answered CommitTimeout by the sweeper while their round keeps waiting. A single node's writer runs one
 * round at a time, as above: durable is committed there.
 */
import { Clock, Duration, Effect, Random, Schedule } from "effect"
import { assert } from "@vellum/platform"
import { CommitTimeout, InvalidRequest, WriteTimeout, type StorageFailed } from "../errors.js"
import type { TransactionLog, WriteUnit } from "../log/TransactionLog.js"
import { MAX_RECORD_BODY, RecordKind, bodyLength, framedLength, type LogRecord } from "../log/records.js"
import { Miss } from "./commitCheck.js"
import {
  RoundView,
  UuidSource,
  planCommand,
  type Plan,
  type PlanLimits,
  type PlannedRecord,
  type WriteCommand,
  type WriteError,
  type WriteResult
} from "./planner.js"
import type { ReadIndex } from "./ReadIndex.js"
import type { EventIdCache } from "../cache/EventIdCache.js"
import type { Leadership } from "../replica/Leadership.js"
import { MAX_ROUNDS_IN_FLIGHT, makeRoundPipeline, type PipelinedRound } from "./RoundPipeline.js"

export {
  type AppendResult,
  type ProposedEvent,
  type WriteCommand,
  type WriteError,
  type WriteResult
} from "./planner.js"

/** A written round, waiting to be committed (or a round that wrote nothing: `records` empty). */
interface WrittenRound extends PipelinedRound {
  readonly batch: ReadonlyArray<Pending>
  readonly plans: ReadonlyArray<Plan>
  readonly records: ReadonlyArray<LogRecord>
  /** The log positions of command `i`'s records. */
  readonly positionsOf: (i: number) => ReadonlyArray<number>
}

/** How a command ended: its result, or why it failed. */
export type WriteOutcome =
  { readonly ok: true; readonly result: WriteResult } | { readonly ok: false; readonly error: WriteError }

/**
 * A queued command and the callback that answers it. A plain array and a plain callback rather than
 * Effect's Queue and Deferred: the hand-off then costs one async step per append instead of several, which
 * is most of a single-event append's CPU (measured ~15× faster round trips). The caller turns the callback
 * into an `Effect.async` (see `submit`), mapping the outcome there, so an append is one async step.
 */
interface Pending {
  readonly command: WriteCommand
  readonly answer: (outcome: WriteOutcome) => void
  /** Clock time it was queued (for the write timeout). */
  readonly queuedAt: number
  /** Answered already (by its batch, or by the write timeout: the later answer is dropped). */
  settled: boolean
  /** Its round has answered it (a round answers each of its commands exactly once). */
  answeredByRound: boolean
}

const failed = (error: WriteError): WriteOutcome => ({ ok: false, error })
const succeeded = (result: WriteResult): WriteOutcome => ({ ok: true, result })

export interface WriterConfig extends PlanLimits {
  readonly maxBatchCommands: number
  /**
   * A command not answered within this time (the disk stalls) is answered with WriteTimeout; its outcome is
   * unknown. Checked once a second by one sweeper fiber, not by a timer per command (a timeout per append
   * costs more than the append).
   */
  readonly writeTimeoutMillis: number
}

/** Figures for the node's stats (the reference's `es.writer` group). */
export interface WriterStats {
  rounds: number
  commands: number
  /** Event records made durable (appended events, metadata events, tombstones). */
  eventsWritten: number
  /** Bytes written by the last durable batch, and its write-to-durable time in ms. */
  lastFlushSize: number
  lastFlushDelayMs: number
  maxFlushSize: number
  maxFlushDelayMs: number
  totalFlushSize: number
  totalFlushDelayMs: number
  flushes: number
}

/** The node is degraded: a write failed, and none has succeeded since. */
export interface WritesRefused {
  /** The latest failure. */
  readonly error: StorageFailed
  /** Clock time the first write failed. */
  readonly sinceMillis: number
}

/**
 * How often recovery is tried while it fails: quickly at first (a transient error), then every 5 s (a full
 * disk waits for an operator). On Effect's Clock, so the simulator controls it.
 */
const recoverySchedule = Schedule.union(
  Schedule.exponential(Duration.millis(50), 2),
  Schedule.spaced(Duration.seconds(5))
)

/** Why a plan's records cannot be written as one unit, if they cannot. */
const unwritable = (plan: Extract<Plan, { _tag: "Write" }>, maxUnitBytes: number): InvalidRequest | undefined => {
  let size = 0
  for (const r of plan.records) {
    // The encoder refuses bodies past the record limit; reject here so it never throws in the writer.
    const body = bodyLength(r)
    if (body > MAX_RECORD_BODY)
      return new InvalidRequest({
        message: `a record of ${body} bytes exceeds the record limit of ${MAX_RECORD_BODY} bytes`
      })
    size += framedLength(r)
  }
  return size > maxUnitBytes
    ? new InvalidRequest({ message: `a write of ${size} bytes does not fit in a chunk of ${maxUnitBytes} bytes` })
    : undefined
}

export const makeWriter = (
  log: TransactionLog,
  readIndex: ReadIndex,
  ids: EventIdCache,
  config: WriterConfig,
  onCommitted: (records: ReadonlyArray<LogRecord>, endPosition: number) => Effect.Effect<void>,
  /** A clustered store's: rounds wait for a quorum, clients write only while the node leads. */
  leadership?: {
    readonly state: Leadership
    /** Runs a round (or a recovery) exclusively of the replica's own changes to the log. */
    readonly exclusive: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  }
) =>
  Effect.gen(function* () {
    const clock = yield* Effect.clock
    /** Set from a failed write until a write succeeds again (the node is degraded). */
    let refused: WritesRefused | undefined
    /** Commands are refused at once: a write failed and the log has not recovered yet. */
    let refusing = false
    let queue: Array<Pending> = []
    /** The commands of the rounds being written or waiting for their quorum (answered when committed). */
    const inFlight = new Set<ReadonlyArray<Pending>>()
    let wake: (() => void) | undefined
    /** Takes up to `maxBatchCommands` queued commands as a round. */
    const takeNow = (): ReadonlyArray<Pending> => {
      assert(
        inFlight.size < (leadership === undefined ? 1 : MAX_ROUNDS_IN_FLIGHT),
        "Writer: one round at a time (a clustered writer's rounds in flight are bounded)"
      )
      const batch = queue.length <= config.maxBatchCommands ? queue : queue.slice(0, config.maxBatchCommands)
      queue = queue.length <= config.maxBatchCommands ? [] : queue.slice(config.maxBatchCommands)
      inFlight.add(batch)
      stats.rounds++
      stats.commands += batch.length
      return batch
    }
    /** Resolves once a command is queued (at once if one is). */
    const commandsArrive = Effect.async<void>((resume) => {
      if (queue.length > 0) return resume(Effect.void)
      // Two waits at once would take commands while the other is still writing or answering them.
      assert(wake === undefined, "Writer: one round at a time")
      wake = () => {
        wake = undefined
        resume(Effect.void)
      }
      return Effect.sync(() => {
        wake = undefined
      })
    })
    /** Waits for at least one command, then takes up to `maxBatchCommands` of them. */
    const takeBatch = Effect.zipRight(
      commandsArrive,
      Effect.sync(() => takeNow())
    )
    /** A round has answered its commands: let them (and their event data) go. */
    const release = (batch: ReadonlyArray<Pending>): void => {
      for (let i = 0; i < batch.length; i++) assert(batch[i]!.answeredByRound, "Writer: each command is answered once")
      inFlight.delete(batch)
    }
    const stats: WriterStats = {
      rounds: 0,
      commands: 0,
      eventsWritten: 0,
      lastFlushSize: 0,
      lastFlushDelayMs: 0,
      maxFlushSize: 0,
      maxFlushDelayMs: 0,
      totalFlushSize: 0,
      totalFlushDelayMs: 0,
      flushes: 0
    }

    /**
     * Plans commands `from`.. of the round in plain code; only a view miss costs an Effect (the read), after
     * which planning resumes at the command that missed. A failed read fails that command alone.
     */
    const planFrom = (
      batch: ReadonlyArray<Pending>,
      plans: Array<Plan>,
      from: number,
      view: RoundView,
      nowMicros: number,
      uuids: UuidSource
    ): Effect.Effect<void> => {
      for (let i = from; i < batch.length; i++) {
        let p: Plan
        try {
          p = planCommand(view, batch[i]!.command, nowMicros, uuids, config)
        } catch (e) {
          if (!(e instanceof Miss)) throw e
          return Effect.matchEffect(view.load(e.query), {
            onFailure: (error) => {
              plans[i] = { _tag: "Fail", error }
              return planFrom(batch, plans, i + 1, view, nowMicros, uuids)
            },
            onSuccess: () => planFrom(batch, plans, i, view, nowMicros, uuids)
          })
        }
        if (p._tag === "Write") {
          const invalid = unwritable(p, log.maxUnitBytes)
          if (invalid !== undefined) p = { _tag: "Fail", error: invalid }
          else for (const r of p.records) view.remember(r)
        }
        plans[i] = p
      }
      return Effect.void
    }

    /**
     * Answers every command of a durable (or failed-to-plan) round. Idempotent retries report the position
     * of the original event, which may need a read: those are answered after the rest.
     */
    const answerAll = (
      batch: ReadonlyArray<Pending>,
      plans: ReadonlyArray<Plan>,
      positionsOf: (i: number) => ReadonlyArray<number>
    ): Effect.Effect<void> => {
      let retries: Array<number> | undefined
      for (let i = 0; i < batch.length; i++) {
        const p = plans[i]!
        if (p._tag === "Fail") answerFromRound(batch[i]!, failed(p.error))
        else if (p._tag === "Write") answerFromRound(batch[i]!, succeeded(p.answer(positionsOf(i))))
        else (retries ??= []).push(i)
      }
      if (retries === undefined) return Effect.void
      return Effect.forEach(
        retries,
        (i) => {
          const p = plans[i] as Extract<Plan, { _tag: "Idempotent" }>
          return Effect.map(Effect.either(readIndex.eventAt(p.stream, p.last)), (original) =>
            answerFromRound(
              batch[i]!,
              succeeded({
                _tag: "Appended",
                firstEventNumber: p.first,
                lastEventNumber: p.last,
                position: original._tag === "Right" && original.right !== undefined ? original.right.logPosition : -1,
                idempotent: true
              })
            )
          )
        },
        { discard: true }
      )
    }

    /** A round's answer to one of its commands (a timeout may have answered it first: then this one is dropped). */
    const answerFromRound = (pending: Pending, outcome: WriteOutcome): void => {
      assert(!pending.answeredByRound, "Writer: each command is answered once")
      pending.answeredByRound = true
      pending.answer(outcome)
    }

    const noPositions: ReadonlyArray<number> = []

    /**
     * Plans a round against `view` and writes it; undefined once the round is answered already (it wrote
     * nothing, or its write failed). Its records stay uncommitted until `finishRound`.
     */
    const writeRound = (batch: ReadonlyArray<Pending>, view: RoundView): Effect.Effect<WrittenRound | undefined> =>
      Effect.gen(function* () {
        const nowMicros = (yield* Clock.currentTimeMillis) * 1000
        const uuids = new UuidSource(yield* Random.nextInt)
        const idsBefore = view.cachedIdCount()
        const plans: Array<Plan> = new Array(batch.length)
        yield* planFrom(batch, plans, 0, view, nowMicros, uuids)
        const units: Array<WriteUnit> = []
        const unitRecords: Array<Array<PlannedRecord>> = []
        const unitOf: Array<number> = new Array(plans.length)
        for (let i = 0; i < plans.length; i++) {
          const p = plans[i]!
          if (p._tag === "Write" && p.records.length > 0) {
            unitOf[i] = units.length
            units.push({ records: p.records, completeChunkAfter: p.completeChunkAfter })
            unitRecords.push(p.records)
          }
        }
        const hasEpoch = batch.some((pending) => pending.command._tag === "Epoch")
        if (units.length === 0) {
          const start = log.writerPosition()
          return { batch, plans, records: [], start, end: start, positionsOf: () => noPositions, hasEpoch }
        }
        const start = log.writerPosition()
        const prepared = log.prepare(units)
        const startedMs = yield* Clock.currentTimeMillis
        const written = yield* Effect.either(log.write(prepared))
        recordFlush(prepared, (yield* Clock.currentTimeMillis) - startedMs)
        if (written._tag === "Left") {
          // Planning put the round's ids in the cache; they were never written, so a retry must not match them.
          view.undoCachedIds(idsBefore)
          for (const pending of batch) answerFromRound(pending, failed(written.left))
          yield* refuseWrites(written.left)
          return undefined
        }
        if (refused !== undefined) {
          yield* Effect.logInfo(
            `writes resumed after ${clock.unsafeCurrentTimeMillis() - refused.sinceMillis} ms: the log is back at position ${log.writerPosition()}`
          )
          refused = undefined
        }
        const records: Array<LogRecord> = []
        // Positions only grow: a record placed at or below the committed position would overwrite what
        // readers already see in the index.
        let lastPosition = readIndex.committed() - 1
        for (let u = 0; u < unitRecords.length; u++) {
          const placed = prepared.positions[u]!
          const unit = unitRecords[u]!
          for (let k = 0; k < unit.length; k++) {
            assert(placed[k]! > lastPosition, "Writer: positions only grow")
            lastPosition = placed[k]!
            ;(unit[k] as { logPosition: number }).logPosition = placed[k]!
            if (unit[k]!.kind === RecordKind.Event) stats.eventsWritten++
            records.push(unit[k]!)
          }
        }
        assert(prepared.endPosition > lastPosition, "Writer: positions only grow")
        const positionsOf = (i: number) => (unitOf[i] === undefined ? noPositions : prepared.positions[unitOf[i]!]!)
        return { batch, plans, records, start, end: prepared.endPosition, positionsOf, hasEpoch }
      })

    /** Indexes a committed round's records and answers its commands. */
    const finishRound = (round: WrittenRound): Effect.Effect<void> =>
      Effect.gen(function* () {
        if (round.records.length > 0) {
          readIndex.applyCommitted(round.records, round.end)
          yield* onCommitted(round.records, round.end)
          // Backpressure: hold the writer while the index is behind writing memtables to tables. If the
          // index's background work failed, nothing acknowledged is at risk (the log is the truth and the
          // index is rebuilt from it on the next start), so the writer goes on.
          yield* Effect.ignore(readIndex.index.awaitCapacity)
        }
        yield* answerAll(round.batch, round.plans, round.positionsOf)
      })

    /** A single node's round: durable is committed. */
    const runRound = (batch: ReadonlyArray<Pending>) =>
      Effect.flatMap(writeRound(batch, new RoundView(readIndex, ids)), (round) =>
        round === undefined ? Effect.void : finishRound(round)
      )

    const pipeline =
      leadership === undefined
        ? undefined
        : makeRoundPipeline<Pending, WrittenRound>({
            leadership: leadership.state,
            newView: () => new RoundView(readIndex, ids),
            writeRound,
            finishRound,
            answerUncertain: (round, error) =>
              // Only what the round wrote is uncertain: answers decided against committed state stand.
              answerAll(
                round.batch,
                round.plans.map((p) => (p._tag === "Write" ? { _tag: "Fail", error } : p)),
                () => noPositions
              ),
            answerAllWith: (round, error) =>
              Effect.sync(() => {
                for (const pending of round.batch) answerFromRound(pending, failed(error))
              }),
            taking: () => !refusing,
            queued: () => queue.length,
            takeNow,
            commandsArrive,
            release,
            onLost: () => {
              const refusal = leadership.state.refusal()
              if (refusal !== undefined) refuseQueued(refusal)
            }
          })

    const recordFlush = (
      prepared: { readonly segments: ReadonlyArray<{ readonly bytes: Uint8Array }> },
      delayMs: number
    ) => {
      let size = 0
      for (const segment of prepared.segments) size += segment.bytes.length
      stats.flushes++
      stats.lastFlushSize = size
      stats.lastFlushDelayMs = delayMs
      stats.maxFlushSize = Math.max(stats.maxFlushSize, size)
      stats.maxFlushDelayMs = Math.max(stats.maxFlushDelayMs, delayMs)
      stats.totalFlushSize += size
      stats.totalFlushDelayMs += delayMs
    }

    /** From now on every command is refused with `error` (queued ones too) until the log has recovered. */
    const refuseWrites = (error: StorageFailed) =>
      Effect.suspend(() => {
        refusing = true
        const first = refused === undefined
        refused = { error, sinceMillis: refused?.sinceMillis ?? clock.unsafeCurrentTimeMillis() }
        const waiting = queue
        queue = []
        for (const pending of waiting) pending.answer(failed(error))
        // Logged when the node becomes degraded, not at every write a still-full disk refuses.
        return first
          ? Effect.logError(`writes refused: ${error.message} (${error.detail ?? "no detail"})`)
          : Effect.void
      })

    const exclusive = leadership?.exclusive ?? (<A, E, R>(effect: Effect.Effect<A, E, R>) => effect)

    /**
     * Retries the log's recovery until it succeeds; refusals meanwhile carry the latest error. Each attempt
     * is exclusive of the replica's changes, not the whole wait (a full disk may take long).
     */
    const recover = Effect.gen(function* () {
      yield* exclusive(log.recover).pipe(
        Effect.tapError((error) =>
          Effect.sync(() => {
            if (refused !== undefined) refused = { ...refused, error }
          })
        ),
        Effect.retry(recoverySchedule)
      )
      refusing = false
    })

    /** Answers every queued command with `error` (the node stopped leading), but a new term's epoch. */
    const refuseQueued = (error: WriteError): void => {
      const waiting = queue
      queue = waiting.filter((pending) => pending.command._tag === "Epoch")
      for (const pending of waiting) if (pending.command._tag !== "Epoch") pending.answer(failed(error))
    }

    const loop = Effect.gen(function* () {
      if (refusing) yield* recover
      const batch = yield* takeBatch
      if (pipeline === undefined) {
        yield* runRound(batch)
        release(batch)
      } else yield* exclusive(pipeline(batch))
    }).pipe(Effect.forever)

    /** Queues a command; `answer` is called once, after its batch is durable and indexed (or failed, or timed out). */
    const enqueue = (command: WriteCommand, answer: (outcome: WriteOutcome) => void): void => {
      const pending: Pending = {
        command,
        queuedAt: clock.unsafeCurrentTimeMillis(),
        settled: false,
        answeredByRound: false,
        answer: (outcome) => {
          if (pending.settled) return
          pending.settled = true
          answer(outcome)
        }
      }
      // An epoch is how a clustered node starts leading: it alone passes while clients are refused.
      const notLeader = command._tag === "Epoch" ? undefined : leadership?.state.refusal()
      if (notLeader !== undefined) return pending.answer(failed(notLeader))
      if (refusing && refused !== undefined) return pending.answer(failed(refused.error))
      queue.push(pending)
      if (wake !== undefined) wake()
    }

    /**
     * Answers every command older than the write timeout with WriteTimeout (queued or being written). A timed-out
     * command still queued is written when its turn comes: its outcome is unknown to its caller either way.
     */
    const timeoutMillis = leadership?.state.commitTimeoutMillis ?? config.writeTimeoutMillis
    // A clustered write waits for its disk and its quorum: past the commit timeout it is a CommitTimeout.
    const timedOut = (): WriteError =>
      leadership === undefined
        ? new WriteTimeout({ timeoutMillis })
        : new CommitTimeout({
            message: `the write was not committed by a quorum within ${timeoutMillis} ms; it may still be committed`
          })
    const sweep = Effect.sync(() => {
      const deadline = clock.unsafeCurrentTimeMillis() - timeoutMillis
      const expire = (pending: Pending) => {
        // A new leader's epoch waits for its quorum as long as the node leads (followers may need to catch up).
        if (leadership !== undefined && pending.command._tag === "Epoch") return
        if (!pending.settled && pending.queuedAt <= deadline) pending.answer(failed(timedOut()))
      }
      for (const batch of inFlight) for (const pending of batch) expire(pending)
      for (const pending of queue) expire(pending)
    })
    const sweeper = Effect.forever(Effect.zipRight(Effect.sleep(Duration.seconds(1)), sweep))

    const submit = (command: WriteCommand): Effect.Effect<WriteResult, WriteError> =>
      Effect.async<WriteResult, WriteError>((resume) => {
        enqueue(command, (outcome) => resume(outcome.ok ? Effect.succeed(outcome.result) : Effect.fail(outcome.error)))
      })

    return {
      loop,
      sweeper,
      submit,
      enqueue,
      refuseQueued,
      stats,
      queued: () => queue.length,
      refused: () => refused
    }
  })

const hex = (n: number, width: number) => n.toString(16).padStart(width, "0")

const u32 = Effect.map(Random.next, (x) => Math.floor(x * 4294967296) >>> 0)

/** A version-4 UUID from Effect's Random service (deterministic under a seeded Random). */
export const randomUuid: Effect.Effect<string> = Effect.map(Effect.all([u32, u32, u32, u32]), ([a, b, c, d]) => {
  const timeHi = ((b & 0x0fff) | 0x4000) >>> 0
  const clock = ((c >>> 16) & 0x3fff) | 0x8000
  return `${hex(a, 8)}-${hex(b >>> 16, 4)}-${hex(timeHi & 0xffff, 4)}-${hex(clock, 4)}-${hex(c & 0xffff, 4)}${hex(d, 8)}`
})
