/**
 * Observations against the model: what a transport showed (simStore.ts) must be what the model says,
 * field by field for everything the transport shows. The model knows the store API's paging fields; for an
 * Atom feed the expected `headOfStream` and `next`/`previous` links follow from them by these rules
 * (written here from the reference's behaviour, independently of the feed renderer):
 *
 *   forward  — headOfStream = end of stream (from + count − 1 ≥ last); `next` → from − 1 when from > 0;
 *              `previous` → min(from + count − 1, last) + 1 unless the page is at the end and empty;
 *   backward — headOfStream = a head read; with f = (head ? last : from): `next` → f − count unless at the
 *              end of the stream; `previous` → min(f, last) + 1.
 */
import type { ModelEvent, StoreModel, StreamReadModel, EventReadModel, WriteOutcome } from "./model.js"
import type {
  ObservedEvent,
  ObservedEventRead,
  ObservedStreamRead,
  ObservedWrite,
  Paging,
  ReadRequest
} from "./simStore.js"

/** Compares one stored event with the model's; learns ids the server chose. */
export const compareEvent = (model: StoreModel, actual: ObservedEvent, expected: ModelEvent): string | undefined => {
  if (actual.eventNumber !== expected.eventNumber)
    return `event number ${actual.eventNumber} where the model has ${expected.eventNumber}`
  if (expected.eventId === undefined) model.learnEventId(expected, actual.eventId)
  else if (expected.eventId !== actual.eventId)
    return `event ${expected.stream}#${expected.eventNumber} has id ${actual.eventId}, the model ${expected.eventId}`
  if (actual.eventType !== expected.eventType)
    return `event ${expected.stream}#${expected.eventNumber} has type ${actual.eventType}, the model ${expected.eventType}`
  if (!Buffer.from(expected.data).equals(Buffer.from(actual.data))) {
    return `event ${expected.stream}#${expected.eventNumber} data differs: ${Buffer.from(actual.data).toString()} vs ${Buffer.from(expected.data).toString()}`
  }
  return undefined
}

type ModelPage = Extract<StreamReadModel, { _tag: "Success" }>

/** The feed facts the spec derives from the model's page. */
export const expectedFeedPaging = (request: ReadRequest, page: ModelPage): Extract<Paging, { via: "feed" }> => {
  const { from, count } = request
  const last = page.lastEventNumber
  if (request.direction === "forward") {
    return {
      via: "feed",
      headOfStream: page.isEndOfStream,
      next: from > 0 ? from - 1 : undefined,
      previous: !page.isEndOfStream || page.events.length > 0 ? Math.min(from + count - 1, last) + 1 : undefined
    }
  }
  const start = from < 0 ? last : from
  return {
    via: "feed",
    headOfStream: from < 0,
    next: page.isEndOfStream ? undefined : start - count,
    previous: Math.min(start, last) + 1
  }
}

const comparePaging = (request: ReadRequest, actual: Paging, expected: ModelPage): string | undefined => {
  const wanted: Paging =
    actual.via === "store"
      ? {
          via: "store",
          nextEventNumber: expected.nextEventNumber,
          lastEventNumber: expected.lastEventNumber,
          isEndOfStream: expected.isEndOfStream
        }
      : expectedFeedPaging(request, expected)
  return firstDifference(actual, wanted)
}

const firstDifference = (
  actual: Readonly<Record<string, unknown>>,
  wanted: Readonly<Record<string, unknown>>
): string | undefined => {
  for (const key of Object.keys(wanted)) {
    if (actual[key] !== wanted[key]) return `${key} is ${String(actual[key])}, the model says ${String(wanted[key])}`
  }
  return undefined
}

/**
 * A page whose window holds events a scavenge may have removed (discardable, yet visible now: the
 * metadata was relaxed after it hid them): the read shows any subset of those and every other event of
 * the window, in order. Paging then depends on what survived; only what does not is compared.
 */
const compareUncertainPage = (
  model: StoreModel,
  actual: Extract<ObservedStreamRead, { _tag: "Success" }>,
  expected: ModelPage
): string | undefined => {
  const stable =
    actual.paging.via === "store"
      ? firstDifference(actual.paging, { lastEventNumber: expected.lastEventNumber })
      : undefined
  if (stable !== undefined) return stable
  let i = 0
  for (const wanted of expected.events) {
    const shown = actual.events[i]
    if (shown !== undefined && shown.eventNumber === wanted.eventNumber) {
      const problem = compareEvent(model, shown, wanted)
      if (problem !== undefined) return problem
      i++
    } else if (model.isDiscardable(wanted)) model.discardRule.gone(wanted)
    else {
      return `event ${wanted.stream}#${wanted.eventNumber} is missing; no scavenge may remove it (read [${actual.events.map((e) => e.eventNumber)}], the model [${expected.events.map((e) => e.eventNumber)}])`
    }
  }
  if (i < actual.events.length)
    return `event #${actual.events[i]!.eventNumber} is shown out of place or hidden (the model [${expected.events.map((e) => e.eventNumber)}])`
  return undefined
}

/** Compares a stream read with the model. */
export const compareStreamRead = (
  model: StoreModel,
  request: ReadRequest,
  actual: ObservedStreamRead,
  expected: StreamReadModel
): string | undefined => {
  if (actual._tag !== expected._tag) return `read gave ${actual._tag}, the model ${expected._tag}`
  if (
    actual._tag === "NoStream" &&
    expected._tag === "NoStream" &&
    actual.lastEventNumber !== undefined &&
    actual.lastEventNumber !== expected.lastEventNumber
  ) {
    return `NoStream with last ${actual.lastEventNumber}, the model ${expected.lastEventNumber}`
  }
  if (actual._tag === "Success" && expected._tag === "Success") {
    if (expected.events.some((e) => model.isDiscardable(e))) return compareUncertainPage(model, actual, expected)
    const paging = comparePaging(request, actual.paging, expected)
    if (paging !== undefined) return paging
    if (actual.events.length !== expected.events.length) {
      return `${actual.events.length} events [${actual.events.map((e) => e.eventNumber)}] where the model has ${expected.events.length} [${expected.events.map((e) => e.eventNumber)}]`
    }
    for (let i = 0; i < actual.events.length; i++) {
      const problem = compareEvent(model, actual.events[i]!, expected.events[i]!)
      if (problem !== undefined) return problem
    }
  }
  return undefined
}

/** Compares a single-event read with the model; a 404 stands for both "no such event" and "no stream". */
export const compareEventRead = (
  model: StoreModel,
  actual: ObservedEventRead,
  expected: EventReadModel
): string | undefined => {
  // An event a scavenge may have removed reads as missing (NotFound, a 404 over HTTP).
  const mayBeGone = expected._tag === "Success" && model.isDiscardable(expected.event)
  if (mayBeGone && (actual._tag === "NotFound" || actual._tag === "Missing")) {
    model.discardRule.gone(expected.event)
    return undefined
  }
  const agrees =
    actual._tag === expected._tag ||
    (actual._tag === "Missing" && (expected._tag === "NotFound" || expected._tag === "NoStream"))
  if (!agrees) return `got ${actual._tag}, the model ${expected._tag}`
  if (actual._tag === "Success" && expected._tag === "Success") return compareEvent(model, actual.event, expected.event)
  return undefined
}

/** A write's answer against one the model allows; fields the transport does not show are not compared. */
export const writeMatches = (expected: WriteOutcome, actual: ObservedWrite): boolean => {
  if (expected._tag !== actual._tag) return false
  if (expected._tag === "Appended" && actual._tag === "Appended") {
    return (
      expected.first === actual.first &&
      (actual.last === undefined || actual.last === expected.last) &&
      (actual.idempotent === undefined || actual.idempotent === expected.idempotent)
    )
  }
  if (expected._tag === "WrongExpectedVersion" && actual._tag === "WrongExpectedVersion")
    return expected.current === actual.current
  return true
}
