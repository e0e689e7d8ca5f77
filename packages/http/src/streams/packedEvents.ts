/**
 * Proposed events packed into one buffer, to cross a thread boundary cheaply: the data and metadata of
 * every event laid end to end in one ArrayBuffer (transferred, not copied), with the ids, types, JSON flags
 * and sizes beside it. Structured-cloning the events themselves would copy each payload's whole backing
 * buffer (often Node's 8 KiB pool) and build one object per event on the way.
 */
import type { ProposedEvent } from "@vellum/storage"

export interface PackedEvents {
  readonly ids: ReadonlyArray<string>
  readonly types: ReadonlyArray<string>
  /** 1 where the event is JSON. */
  readonly isJson: Uint8Array
  /** Data size then metadata size, per event. */
  readonly sizes: Uint32Array
  /** Every event's data then metadata, in order. */
  readonly bytes: ArrayBuffer
}

export const packEvents = (events: ReadonlyArray<ProposedEvent>): PackedEvents => {
  const sizes = new Uint32Array(events.length * 2)
  const isJson = new Uint8Array(events.length)
  let total = 0
  events.forEach((e, i) => {
    sizes[2 * i] = e.data.byteLength
    sizes[2 * i + 1] = e.metadata.byteLength
    isJson[i] = e.isJson ? 1 : 0
    total += e.data.byteLength + e.metadata.byteLength
  })
  const bytes = new Uint8Array(total)
  let at = 0
  for (const e of events) {
    bytes.set(e.data, at)
    at += e.data.byteLength
    bytes.set(e.metadata, at)
    at += e.metadata.byteLength
  }
  return {
    ids: events.map((e) => e.eventId),
    types: events.map((e) => e.eventType),
    isJson,
    sizes,
    bytes: bytes.buffer
  }
}

/** The buffers `packEvents` made, for a transfer list. */
export const transferables = (packed: PackedEvents): Array<ArrayBuffer> => [
  packed.bytes,
  packed.isJson.buffer as ArrayBuffer,
  packed.sizes.buffer as ArrayBuffer
]

/** The events again, as views into the one buffer. */
export const unpackEvents = (packed: PackedEvents): Array<ProposedEvent> => {
  const events: Array<ProposedEvent> = []
  let at = 0
  for (let i = 0; i < packed.ids.length; i++) {
    const dataSize = packed.sizes[2 * i]!
    const metadataSize = packed.sizes[2 * i + 1]!
    const data = Buffer.from(packed.bytes, at, dataSize)
    const metadata = Buffer.from(packed.bytes, at + dataSize, metadataSize)
    at += dataSize + metadataSize
    events.push({
      eventId: packed.ids[i]!,
      eventType: packed.types[i]!,
      isJson: packed.isJson[i] === 1,
      data,
      metadata
    })
  }
  return events
}
