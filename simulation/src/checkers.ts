/**
 * Checks run after every (re)start, before clients resume, with disk faults paused. They read the
 * EventStore service directly (also when the clients go through HTTP): they verify storage truth.
 * 1. reconcile each client's indeterminate operations: each was written entirely or not at all, and the
 *    model takes whichever the store shows (anything else — half an append — fails the run); the prober
 *    does the same during the run for operations the writer has settled (`reconcileSettled`);
 * 2. every stream the model knows reads exactly as the model says, forward, backward and its metadata:
 *    so every acknowledged write survived the crash, nothing unacknowledged is half-visible (events a
 *    scavenge may have removed — `StoreModel.isDiscardable` — may be absent, nothing else; `$maxAge`
 *    judges by the read's own time, expiry.ts);
 * 3. `$all` (allChecks.ts) is strictly ordered by position, shows no record twice, each stream's events
 *    appear in it in event-number order, every append's events are contiguous (and complete, until a
 *    scavenge may have run), and every model event no scavenge may remove is in it.
 */
import { Clock, Effect } from "effect"
import { DeletedStreamNumber, type EventStoreService } from "@vellum/storage"
import { AllScan } from "./allChecks.js"
import type { Auditor, PendingOp, SimClient } from "./client.js"
import { LongMax, isMetastream, metastreamOf } from "./model.js"
import { anyAgrees, possibleReads } from "./expiry.js"
import { compareStreamRead } from "./readChecks.js"
import { learnScavengePoints } from "./scavengePoints.js"
import { observeStoreRead, type ObservedStreamRead } from "./simStore.js"

/**
 * Whether an indeterminate operation was written, as the store shows it; the model follows. Only for an
 * operation whose outcome is settled (after a restart, or once a later write was acknowledged).
 */
const reconcileOp = (store: EventStoreService, auditor: Auditor, client: SimClient, op: PendingOp) =>
  Effect.gen(function* () {
    const model = auditor.model
    yield* learnScavengePoints(store, auditor)
    const before = model.log.length
    yield* reconcileWrite(store, auditor, client, op)
    // Written by now: the events' creation lies between the send and this read.
    auditor.times.written(op, model.log.slice(before), yield* Clock.currentTimeMillis)
  })

const reconcileWrite = (store: EventStoreService, auditor: Auditor, client: SimClient, op: PendingOp) =>
  Effect.gen(function* () {
    const model = auditor.model
    if (op.kind === "append") {
      const before = model.lastEventNumber(op.stream)
      const actual = yield* store.lastEventNumber(op.stream)
      if (actual === before || (before === LongMax && actual === DeletedStreamNumber)) {
        auditor.trace(`reconcile c${client.id} append ${op.stream}: not written`)
        return
      }
      const ok = model
        .possibleDecisions(
          op.stream,
          op.expected,
          op.events.map((e) => e.eventId)
        )
        .filter((p) => p.decision._tag === "Ok")
      if (ok.length === 0)
        return auditor.fail(`reconcile: ${op.stream} grew from ${before} to ${actual} but the model allows no write`)
      model.learnCache(ok)
      model.applyAppend(op.stream, ok[0]!.decision, op.events, 0)
      auditor.trace(`reconcile c${client.id} append ${op.stream}: written`)
    } else if (op.kind === "hardDelete") {
      if ((yield* store.lastEventNumber(op.stream)) !== DeletedStreamNumber || model.isHardDeleted(op.stream)) return
      const { outcome } = model.hardDelete(op.stream, op.expected, 0)
      if (outcome._tag !== "Appended")
        auditor.fail(`reconcile: ${op.stream} is hard-deleted but the model would not delete it`)
    } else {
      // A soft delete of a hard-deleted stream writes nothing (the store answers StreamDeleted).
      if (model.isHardDeleted(op.stream)) return
      const meta = yield* store.getStreamMetadata(op.stream)
      if (meta.metaLastEventNumber === model.eventsOf(metastreamOf(op.stream)).length - 1) return
      const { outcome } = model.softDelete(op.stream, op.expected, 0)
      if (outcome._tag !== "Appended")
        auditor.fail(`reconcile: ${op.stream} gained metadata but the model would not soft-delete it`)
    }
  })

/** Every indeterminate operation of a client (after a restart: all are settled). */
const reconcile = (store: EventStoreService, auditor: Auditor, client: SimClient) =>
  Effect.gen(function* () {
    for (const [key, { op }] of [...client.pending]) {
      client.pending.delete(key)
      yield* reconcileOp(store, auditor, client, op)
    }
  })

/**
 * During the run: the indeterminate operations answered before `settledBefore` (an acknowledged write was
 * queued after them, so the writer has settled them: written, or rolled back for good). A read that fails
 * (disk faults run) leaves the operation pending for later.
 */
export const reconcileSettled = (
  store: EventStoreService,
  auditor: Auditor,
  clients: ReadonlyArray<SimClient>,
  settledBefore: number
) =>
  Effect.gen(function* () {
    for (const client of clients) {
      for (const [key, pending] of [...client.pending]) {
        if (pending.settledBy >= settledBefore) continue
        const done = yield* Effect.either(reconcileOp(store, auditor, client, pending.op))
        if (done._tag === "Right") {
          client.pending.delete(key)
          auditor.settledInRun++
          auditor.coverage.hit("indeterminate.settledInRun")
        } else
          auditor.trace(`reconcile c${client.id} ${pending.op.kind} ${pending.op.stream} postponed: ${done.left._tag}`)
      }
    }
  })

const verifyStream = (store: EventStoreService, auditor: Auditor, stream: string) =>
  Effect.gen(function* () {
    const model = auditor.model
    const whole = (direction: "forward" | "backward") => ({
      stream,
      direction,
      from: direction === "forward" ? 0 : -1,
      count: 4096
    })
    // `$maxAge` judges by the read's time: any time between its send and its answer.
    const compare = (direction: "forward" | "backward", t0: number, read: ObservedStreamRead, t1: number) =>
      anyAgrees(possibleReads(model, auditor.times, whole(direction), t0, t1), (page) =>
        compareStreamRead(model, whole(direction), read, page)
      )
    const t0 = yield* Clock.currentTimeMillis
    const forwardRead = observeStoreRead(yield* store.readStreamForward(stream, 0, 4096))
    const forward = compare("forward", t0, forwardRead, yield* Clock.currentTimeMillis)
    if (forward !== undefined) return auditor.fail(`after restart, ${stream} forward: ${forward}`)
    const t2 = yield* Clock.currentTimeMillis
    const backwardRead = observeStoreRead(yield* store.readStreamBackward(stream, -1, 4096))
    const backward = compare("backward", t2, backwardRead, yield* Clock.currentTimeMillis)
    if (backward !== undefined) return auditor.fail(`after restart, ${stream} backward: ${backward}`)
    if (!isMetastream(stream)) {
      const meta = yield* store.getStreamMetadata(stream)
      const expected = model.readMetadata(stream)
      // For a hard-deleted stream only the verdict matters (its metastream counts as deleted too).
      if (
        meta._tag !== expected._tag ||
        (meta._tag !== "StreamDeleted" && meta.metaLastEventNumber !== expected.metaLastEventNumber)
      ) {
        return auditor.fail(
          `after restart, metadata of ${stream}: ${meta._tag}@${meta.metaLastEventNumber}, the model ${expected._tag}@${expected.metaLastEventNumber}`
        )
      }
    }
  })

/**
 * One pass over `$all` from the start, `pageSize` records a page, running `pause` between pages (the
 * scanner lets scavenges rewrite chunks under it). The problem found, if any; a read failure fails.
 */
export const scanAll = (
  store: EventStoreService,
  scan: AllScan,
  pageSize: number,
  pause: Effect.Effect<void> = Effect.void
) =>
  Effect.gen(function* () {
    let position = 0
    while (true) {
      const page = yield* store.readAllForward(position, pageSize)
      for (const resolved of page.events) {
        const problem = scan.event(resolved.event!)
        if (problem !== undefined) return problem
      }
      if (page.isEnd) return scan.end()
      if (page.nextPosition <= position) return `$all read from ${position} points back to ${page.nextPosition}`
      position = page.nextPosition
      yield* pause
    }
  })

const verifyAll = (store: EventStoreService, auditor: Auditor) =>
  Effect.gen(function* () {
    const scan = new AllScan(!auditor.model.mayHaveScavenged)
    const problem = (yield* scanAll(store, scan, 512)) ?? scan.missingFrom(auditor.model, auditor.model.log)
    if (problem !== undefined) auditor.fail(`after restart, ${problem}`)
  })

/** Every stream the clients own, its metastream and `$all` read exactly as the model says. */
export const verifyStored = (store: EventStoreService, auditor: Auditor, clients: ReadonlyArray<SimClient>) =>
  Effect.gen(function* () {
    yield* learnScavengePoints(store, auditor)
    for (const client of clients) {
      for (const stream of client.streams) {
        yield* verifyStream(store, auditor, stream)
        yield* verifyStream(store, auditor, metastreamOf(stream))
      }
    }
    yield* verifyAll(store, auditor)
  })

export const verifyAfterRestart = (store: EventStoreService, auditor: Auditor, clients: ReadonlyArray<SimClient>) =>
  Effect.gen(function* () {
    for (const client of clients) yield* reconcile(store, auditor, client)
    // The refill of the id cache on open found only the events still in the log: every point a run before
    // the crash worked to must be known before the model judges which cached ids survived.
    yield* learnScavengePoints(store, auditor)
    auditor.model.restart()
    yield* verifyStored(store, auditor, clients)
  })
