/**
 * Index execution (spec/scavenge.md §2.6, §3.5): the memtables are flushed, then every index table is
 * rewritten without the entries of events below their stream's definite discard point (maybe-expired
 * entries stay), whatever the chunk threshold did. Entries carry a stream hash, not a name, so an entry whose hash belongs to a stream with
 * state is dropped only after its record confirms the stream (another stream may share the hash); a
 * record already removed from the log drops its entry.
 */
import { Effect } from "effect"
import { RecordKind, isMetastream } from "@vellum/storage"
import { dropsMetastreamEntry, dropsOriginalEntry, type DiscardContext } from "../rules/discardRules.js"
import { discardContextOf } from "./executeChunks.js"
import type { RunContext } from "./RunContext.js"
import { StreamsByHash } from "./streamHashes.js"

const drops = <E>(ctx: RunContext<E>, stream: string, eventNumber: number, position: number, discard: DiscardContext): boolean =>
  isMetastream(stream)
    ? dropsMetastreamEntry(ctx.state.metastream(stream), eventNumber, position, discard)
    : dropsOriginalEntry(ctx.state.originalStream(stream), eventNumber, position, discard)

export const executeIndex = <E>(ctx: RunContext<E>) =>
  Effect.gen(function*() {
    const { index, log, readIndex } = ctx.engine
    if (!ctx.totals.indexWork) {
      // No discard point moved and nothing was tombstoned: the previous runs already dropped every entry
      // below the points, so there is nothing to find.
      yield* Effect.logInfo("Index tables left as they are: no discard point moved in this scavenge")
      return
    }
    // Memtables are not scavenged: write them to tables first, so entries of records this run removed do
    // not linger there and weigh again in the next run's calculation (which would then redo chunks).
    yield* index.flush
    const discard = discardContextOf(ctx)
    const hashes = new StreamsByHash(ctx)
    let tables = 0
    const keep = (hashHi: number, hashLo: number, eventNumber: number, position: number) => {
      if (position >= discard.spPosition) return true
      const candidates = hashes.withHi(hashHi)
      if (candidates === undefined) return true
      let wouldDrop = false
      for (const c of candidates) if (c.lo === hashLo && drops(ctx, c.stream, eventNumber, position, discard)) wouldDrop = true
      if (!wouldDrop) return true
      // Confirm whose entry it is before dropping it.
      return Effect.map(log.readRecord(position, readIndex.committed()), (record) => {
        // A removed record's entry goes. Epochs and scavenge points are indexed too but never removed.
        if (record === undefined) return false
        if (record.kind !== RecordKind.Event) return true
        const owner = candidates.find((c) => c.lo === hashLo && c.stream === record.stream)
        return owner === undefined || !drops(ctx, owner.stream, eventNumber, position, discard)
      })
    }
    yield* index.scavenge(keep, (t) =>
      Effect.gen(function*() {
        tables++
        ctx.progress("ExecutingIndex", tables, tables)
        ctx.totals.spaceSaved += t.spaceSaved
        yield* ctx.events.indexTableScavenged({
          level: t.level, index: t.index, timeTakenMillis: t.timeTakenMillis, entriesDeleted: t.entriesDeleted, entriesKept: t.entriesKept, spaceSaved: t.spaceSaved
        })
      }))
  })
