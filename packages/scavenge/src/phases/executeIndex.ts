/**
 * Index execution: the memtables are flushed, then every index table is
 * rewritten without the entries of events below their stream's definite discard point (maybe-expired
 * entries stay), whatever the chunk threshold did. Entries carry a stream hash, not a name: an entry is kept
 * at once when no stream with state and its hash could drop it (StreamsByHash.dropBelow); otherwise its
 * record names the stream, whose state decides (another stream may share the hash); a record already
 * removed from the log drops its entry.
 */
import { Effect } from "effect"
import { RecordKind, isMetastream } from "@vellum/storage"
import { dropsMetastreamEntry, dropsOriginalEntry, type DiscardContext } from "../rules/discardRules.js"
import { discardContextOf } from "./executeChunks.js"
import { UNCACHED, type RunContext } from "./RunContext.js"
import { lookupMetastream, lookupOriginal } from "./StateAccess.js"
import { StreamsByHash } from "./streamHashes.js"

const drops = <E>(
  ctx: RunContext<E>,
  stream: string,
  eventNumber: number,
  position: number,
  discard: DiscardContext
) =>
  isMetastream(stream)
    ? Effect.map(lookupMetastream(ctx.state, stream), (data) =>
        dropsMetastreamEntry(data, eventNumber, position, discard)
      )
    : Effect.map(lookupOriginal(ctx.state, stream), (data) => dropsOriginalEntry(data, eventNumber, position, discard))

export const executeIndex = <E>(ctx: RunContext<E>) =>
  Effect.gen(function* () {
    const { index, log, readIndex } = ctx.engine
    // The chunk passes are over: their scratch buffers (~20 MiB) need not wait for the run's end.
    ctx.buffers.clear()
    if (!ctx.totals.indexWork) {
      // No discard point moved and nothing was tombstoned: the previous runs already dropped every entry
      // below the points, so a rewrite would find nothing. Every table is still reported (one
      // `$scavengeIndexCompleted` each, as the reference has every run do) with what a rewrite would have found.
      yield* Effect.logInfo("Index tables left as they are: no discard point moved in this scavenge")
      const unchanged = index.tables()
      for (const [i, t] of unchanged.entries()) {
        ctx.progress("ExecutingIndex", i + 1, unchanged.length)
        yield* ctx.events.indexTableScavenged({
          level: t.level,
          index: t.index,
          timeTakenMillis: 0,
          entriesDeleted: 0,
          entriesKept: t.entries,
          spaceSaved: 0
        })
      }
      return
    }
    // Memtables are not scavenged: write them to tables first, so entries of records this run removed do
    // not linger there and weigh again in the next run's calculation (which would then redo chunks).
    yield* index.flush
    const discard = discardContextOf(ctx)
    const hashes = yield* StreamsByHash.build(ctx)
    let tables = 0
    const keep = (hashHi: number, hashLo: number, eventNumber: number, position: number) => {
      if (position >= discard.spPosition) return true
      // No stream with state and this hash drops an entry this high (or any: the hash is not theirs).
      if (eventNumber >= hashes.dropBelow(hashHi, hashLo)) return true
      // Some stream with this hash would drop it: whose entry it is, its record says.
      return Effect.flatMap(log.readRecord(position, readIndex.committed(), UNCACHED), (record) => {
        // A removed record's entry goes. Epochs and scavenge points are indexed too but never removed.
        if (record === undefined) return Effect.succeed(false)
        if (record.kind !== RecordKind.Event) return Effect.succeed(true)
        const owner = index.hashOf(record.stream)
        if (owner.hi !== hashHi || owner.lo !== hashLo) return Effect.succeed(true)
        return Effect.map(drops(ctx, record.stream, eventNumber, position, discard), (dropped) => !dropped)
      })
    }
    yield* index.scavenge(keep, (t) =>
      Effect.gen(function* () {
        tables++
        ctx.progress("ExecutingIndex", tables, tables)
        ctx.totals.spaceSaved += t.spaceSaved
        yield* ctx.events.indexTableScavenged({
          level: t.level,
          index: t.index,
          timeTakenMillis: t.timeTakenMillis,
          entriesDeleted: t.entriesDeleted,
          entriesKept: t.entriesKept,
          spaceSaved: t.spaceSaved
        })
      })
    )
  })
