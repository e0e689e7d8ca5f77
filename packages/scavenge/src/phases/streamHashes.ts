/**
 * The streams the state holds data for, by their index hash: index entries carry a hash, not a name, so
 * calculation asks whether a hash is shared by several such streams, and index execution which of them an
 * entry may belong to.
 */
import type { RunContext } from "./RunContext.js"

export interface HashedStream {
  readonly lo: number
  readonly stream: string
}

export class StreamsByHash {
  private readonly byHi = new Map<number, Array<HashedStream>>()

  constructor(ctx: RunContext<unknown>) {
    for (const stream of ctx.state.streamsWithData()) {
      const { hi, lo } = ctx.engine.index.hashOf(stream)
      const list = this.byHi.get(hi)
      if (list === undefined) this.byHi.set(hi, [{ lo, stream }])
      else list.push({ lo, stream })
    }
  }

  /** The streams with state whose hash has this high word (check `lo` too), if any. */
  withHi(hi: number): ReadonlyArray<HashedStream> | undefined {
    return this.byHi.get(hi)
  }

  /** Whether two or more streams with state have this hash. */
  isShared(hi: number, lo: number): boolean {
    let n = 0
    for (const s of this.byHi.get(hi) ?? []) if (s.lo === lo && ++n > 1) return true
    return false
  }
}
