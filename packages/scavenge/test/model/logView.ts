/**
 * Plain questions about decoded log records that every stage of the model asks.
 */
import { EventFlags, RecordKind, type EventRecord, type LogRecord } from "@vellum/storage"
import { indexKey } from "./types.js"

export const chunkOf = (position: number, chunkSize: number): number => Math.floor(position / chunkSize)

export const isEvent = (record: LogRecord): record is EventRecord => record.kind === RecordKind.Event

/** A hard delete: the tombstone flag; its event number is DeletedStreamNumber (long.MaxValue). */
export const isTombstone = (record: EventRecord): boolean => (record.flags & EventFlags.Tombstone) !== 0

export const keyOf = (record: EventRecord): string => indexKey(record.stream, record.eventNumber)

/**
 * The index as it stands before this run: every event record (tombstones included) except the entries
 * earlier runs removed. Grouped by stream, ascending event number (position breaks ties).
 */
export const indexByStream = (
  records: ReadonlyArray<LogRecord>,
  removedFromIndex: ReadonlySet<string>
): ReadonlyMap<string, ReadonlyArray<EventRecord>> => {
  const byStream = new Map<string, Array<EventRecord>>()
  for (const record of records) {
    if (!isEvent(record) || removedFromIndex.has(keyOf(record))) continue
    const entries = byStream.get(record.stream) ?? []
    entries.push(record)
    byStream.set(record.stream, entries)
  }
  for (const entries of byStream.values()) {
    entries.sort((a, b) => a.eventNumber - b.eventNumber || a.logPosition - b.logPosition)
  }
  return byStream
}

/** "Last event number before the SP": the highest indexed number positioned before it, −1 if none. */
export const lastEventNumberBefore = (entries: ReadonlyArray<EventRecord>, spPosition: number): number => {
  let last = -1
  for (const entry of entries) if (entry.logPosition < spPosition) last = Math.max(last, entry.eventNumber)
  return last
}

/** Adds weight to a logical chunk. */
export const addWeight = (weights: Map<number, number>, chunk: number, weight: number): void => {
  weights.set(chunk, (weights.get(chunk) ?? 0) + weight)
}
