/**
 * Checks run after every (re)start, before clients resume, with disk faults paused. They read the
 * EventStore service directly (also when the clients go through HTTP): they verify storage truth.
 * 1. reconcile each client's indeterminate operation: it was written entirely or not at all, and the
 *    model takes whichever the store shows (anything else — half an append — fails the run);
 * 2. every stream the model knows reads exactly as the model says, forward, backward and its metadata:
 *    so every acknowledged write survived the crash, nothing unacknowledged is half-visible;
 * 3. `$all` is strictly ordered by position, every append's events are contiguous and complete in it,
 *    and each stream's events appear in it in event-number order.
 */
import { Effect } from "effect"
import { DeletedStreamNumber, type EventStoreService, type EventRecord } from "@vellum/storage"
import type { Auditor, SimClient } from "./client.js"
import { LongMax, isMetastream, metastreamOf } from "./model.js"
import { compareStreamRead } from "./readChecks.js"
import { observeStoreRead } from "./simStore.js"

const reconcile = (store: EventStoreService, auditor: Auditor, client: SimClient) =>
  Effect.gen(function*() {
    const op = client.pending
    if (op === undefined) return
    client.pending = undefined
    const model = auditor.model
    if (op.kind === "append") {
      const before = model.lastEventNumber(op.stream)
      const actual = yield* store.lastEventNumber(op.stream)
      if (actual === before || (before === LongMax && actual === DeletedStreamNumber)) {
        auditor.trace(`reconcile c${client.id} append ${op.stream}: not written`)
        return
      }
      const ok = model.possibleDecisions(op.stream, op.expected, op.events.map((e) => e.eventId)).filter((p) => p.decision._tag === "Ok")
      if (ok.length === 0) return auditor.fail(`reconcile: ${op.stream} grew from ${before} to ${actual} but the model allows no write`)
      model.learnCache(ok)
      model.applyAppend(op.stream, ok[0]!.decision, op.events, 0)
      auditor.trace(`reconcile c${client.id} append ${op.stream}: written`)
    } else if (op.kind === "hardDelete") {
      if ((yield* store.lastEventNumber(op.stream)) !== DeletedStreamNumber || model.isHardDeleted(op.stream)) return
      const { outcome } = model.hardDelete(op.stream, op.expected, 0)
      if (outcome._tag !== "Appended") auditor.fail(`reconcile: ${op.stream} is hard-deleted but the model would not delete it`)
    } else {
      // A soft delete of a hard-deleted stream writes nothing (the store answers StreamDeleted).
      if (model.isHardDeleted(op.stream)) return
      const meta = yield* store.getStreamMetadata(op.stream)
      if (meta.metaLastEventNumber === model.eventsOf(metastreamOf(op.stream)).length - 1) return
      const { outcome } = model.softDelete(op.stream, op.expected, 0)
      if (outcome._tag !== "Appended") auditor.fail(`reconcile: ${op.stream} gained metadata but the model would not soft-delete it`)
    }
  })

const verifyStream = (store: EventStoreService, auditor: Auditor, stream: string) =>
  Effect.gen(function*() {
    const model = auditor.model
    const whole = (direction: "forward" | "backward") => ({ stream, direction, from: direction === "forward" ? 0 : -1, count: 4096 })
    const forwardRead = observeStoreRead(yield* store.readStreamForward(stream, 0, 4096))
    const forward = compareStreamRead(model, whole("forward"), forwardRead, model.readForward(stream, 0, 4096))
    if (forward !== undefined) return auditor.fail(`after restart, ${stream} forward: ${forward}`)
    const backwardRead = observeStoreRead(yield* store.readStreamBackward(stream, -1, 4096))
    const backward = compareStreamRead(model, whole("backward"), backwardRead, model.readBackward(stream, -1, 4096))
    if (backward !== undefined) return auditor.fail(`after restart, ${stream} backward: ${backward}`)
    if (!isMetastream(stream)) {
      const meta = yield* store.getStreamMetadata(stream)
      const expected = model.readMetadata(stream)
      // For a hard-deleted stream only the verdict matters (its metastream counts as deleted too).
      if (meta._tag !== expected._tag || (meta._tag !== "StreamDeleted" && meta.metaLastEventNumber !== expected.metaLastEventNumber)) {
        return auditor.fail(`after restart, metadata of ${stream}: ${meta._tag}@${meta.metaLastEventNumber}, the model ${expected._tag}@${expected.metaLastEventNumber}`)
      }
    }
  })

/** Client events carry {c, s, i, n}: client, append sequence, index, count. */
const payloadOf = (event: EventRecord): { c: number; s: number; i: number; n: number } | undefined => {
  if (event.eventType !== "E") return undefined
  try {
    return JSON.parse(event.data.toString("utf8")) as { c: number; s: number; i: number; n: number }
  } catch {
    return undefined
  }
}

const verifyAll = (store: EventStoreService, auditor: Auditor) =>
  Effect.gen(function*() {
    let position = 0
    let lastPosition = -1
    let open: { key: string; next: number; n: number } | undefined
    const lastNumber = new Map<string, number>()
    while (true) {
      const page = yield* store.readAllForward(position, 512)
      for (const resolved of page.events) {
        const event = resolved.event!
        if (event.logPosition <= lastPosition) return auditor.fail(`$all goes back from ${lastPosition} to ${event.logPosition}`)
        lastPosition = event.logPosition
        if (event.eventNumber !== DeletedStreamNumber) {
          const prev = lastNumber.get(event.stream)
          if (prev !== undefined && event.eventNumber <= prev) return auditor.fail(`$all shows ${event.stream}#${event.eventNumber} after #${prev}`)
          lastNumber.set(event.stream, event.eventNumber)
        }
        const p = payloadOf(event)
        if (open !== undefined && (p === undefined || `${p.c}/${p.s}` !== open.key)) {
          return auditor.fail(`$all: append ${open.key} has ${open.next} of its ${open.n} events before ${event.stream}#${event.eventNumber}`)
        }
        if (p === undefined) continue
        const key = `${p.c}/${p.s}`
        if (open === undefined) {
          if (p.i !== 0) return auditor.fail(`$all: append ${key} starts at its event ${p.i}`)
          open = { key, next: 1, n: p.n }
        } else {
          if (p.i !== open.next) return auditor.fail(`$all: append ${key} event ${p.i} where ${open.next} was due`)
          open.next++
        }
        if (open.next === open.n) open = undefined
      }
      if (page.isEnd) break
      position = page.nextPosition
    }
    if (open !== undefined) auditor.fail(`$all ends inside append ${open.key} (${open.next} of ${open.n})`)
  })

export const verifyAfterRestart = (store: EventStoreService, auditor: Auditor, clients: ReadonlyArray<SimClient>) =>
  Effect.gen(function*() {
    for (const client of clients) yield* reconcile(store, auditor, client)
    auditor.model.restart()
    for (const client of clients) {
      for (const stream of client.streams) {
        yield* verifyStream(store, auditor, stream)
        yield* verifyStream(store, auditor, metastreamOf(stream))
      }
    }
    yield* verifyAll(store, auditor)
  })
