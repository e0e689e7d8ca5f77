/**
 * Cleaning: once no chunk holds weight (every removable record is gone), the state
 * no longer needs metastream data or streams that can never lose another event; with chunks still
 * weighted (a positive threshold skipped them), everything is kept for a later run.
 */
import { Effect } from "effect"
import type { RunContext } from "./RunContext.js"
import { ScavengeFailed } from "./errors.js"

export const clean = <E>(ctx: RunContext<E>) =>
  Effect.gen(function* () {
    if (ctx.state.weightedChunks().length === 0) {
      ctx.state.deleteAllMetastreams()
      ctx.state.deleteSpentStreams(ctx.options.unsafeIgnoreHardDeletes)
    } else if (ctx.options.unsafeIgnoreHardDeletes) {
      return yield* Effect.fail(
        new ScavengeFailed({ message: "UnsafeIgnoreHardDeletes is true but not all chunks have been executed" })
      )
    }
    yield* ctx.state.commit({ stage: "Cleaning", sp: ctx.sp })
  })
