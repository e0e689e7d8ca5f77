/**
 * Chunk merging: passes over the completed chunks, each merging neighbours
 * whose data fits one chunk, until a pass merges nothing. No checkpoint inside: a resumed run redoes the
 * phase, and merging what is already merged finds nothing to do.
 */
import { Clock, Effect } from "effect"
import { describeError } from "./errors.js"
import { planMerges } from "../rules/mergePlan.js"
import type { RunContext } from "./RunContext.js"

const completedPrefix = <E>(ctx: RunContext<E>) => {
  const out = []
  for (const chunk of ctx.engine.log.chunks()) {
    if (chunk.footer === undefined) break
    out.push({
      startNumber: chunk.header.startNumber,
      endNumber: chunk.header.endNumber,
      physicalDataSize: chunk.footer.physicalDataSize
    })
  }
  return out
}

export const mergeChunks = <E>(ctx: RunContext<E>) =>
  Effect.gen(function* () {
    const { log } = ctx.engine
    let merges = 0
    while (true) {
      const groups = planMerges(completedPrefix(ctx), log.config.chunkSize)
      if (groups.length === 0) break
      let mergedThisPass = 0
      for (const group of groups) {
        ctx.progress("MergingChunks", merges, merges + groups.length)
        const started = yield* Clock.currentTimeMillis
        const result = yield* Effect.either(
          log.replaceChunks(group.startNumber, group.endNumber, () => true, { pool: ctx.buffers })
        )
        const timeTakenMillis = (yield* Clock.currentTimeMillis) - started
        if (result._tag === "Right") {
          const spaceSaved = result.right.oldBytes - result.right.newBytes
          ctx.totals.spaceSaved += spaceSaved
          merges++
          mergedThisPass++
          yield* Effect.logInfo(
            `Merged chunks ${group.startNumber}-${group.endNumber} (${group.chunks} files), saving ${spaceSaved} bytes`
          )
          yield* ctx.events.chunksMerged({
            startNumber: group.startNumber,
            endNumber: group.endNumber,
            timeTakenMillis,
            spaceSaved,
            error: undefined
          })
        } else {
          // A failed merge is reported and the pass goes on (the chunks stay as they were).
          const error = describeError(result.left)
          yield* Effect.logWarning(`Merging chunks ${group.startNumber}-${group.endNumber} failed: ${error}`)
          yield* ctx.events.chunksMerged({
            startNumber: group.startNumber,
            endNumber: group.endNumber,
            timeTakenMillis,
            spaceSaved: 0,
            error
          })
        }
        yield* ctx.throttle.rest
      }
      if (mergedThisPass === 0) break
    }
  })
