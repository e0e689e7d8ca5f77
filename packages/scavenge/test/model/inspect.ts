/**
 * Reading a model result the way tests assert on it: which event numbers of a stream stayed in the log or
 * in the index. Shared by the model's own tests and the real scavenger's property tests.
 */
import { RecordKind, type LogRecord } from "@vellum/storage"
import { indexKey } from "./types.js"

/** Event numbers of `stream` whose records are among `kept` positions, in log order. */
export const keptEventNumbers = (
  records: ReadonlyArray<LogRecord>,
  kept: ReadonlySet<number>,
  stream: string
): Array<number> =>
  records.flatMap((r) =>
    r.kind === RecordKind.Event && r.stream === stream && kept.has(r.logPosition) ? [r.eventNumber] : []
  )

/** Event numbers of `stream` whose index entries are in `keptInIndex`, ascending. */
export const indexedEventNumbers = (
  records: ReadonlyArray<LogRecord>,
  keptInIndex: ReadonlySet<string>,
  stream: string
): Array<number> =>
  records
    .flatMap((r) =>
      r.kind === RecordKind.Event && r.stream === stream && keptInIndex.has(indexKey(stream, r.eventNumber))
        ? [r.eventNumber]
        : []
    )
    .sort((a, b) => a - b)
