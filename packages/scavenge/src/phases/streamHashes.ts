/**
 * The index hashes of the streams the state holds data for, without their names: index entries carry a
 * hash, not a name, so calculation asks whether a hash is shared by several such streams, and index
 * execution whether an entry with a hash may be dropped at all (entries at or above `dropBelow` never
 * are, so they cost no I/O; others are confirmed by their record, whose stream name the state is then
 * asked about).
 *
 * Memory: 20 bytes per distinct hash in sorted typed arrays (hi, lo, users, dropBelow), built by one
 * ordered walk of the state (a page at a time); the build briefly holds the unsorted hashes as well.
 * `ScavengeHashUsersCacheCapacity` bounds the reference's hash → name cache; nothing here maps a hash to a
 * name (the record at an entry's position names its stream), so there is nothing for it to bound.
 */
import { Effect } from "effect"
import type { MetastreamData, OriginalStreamData } from "./StateAccess.js"
import type { RunContext } from "./RunContext.js"

/** A Uint32Array or Float64Array that grows as values are pushed. */
class Growing<A extends Uint32Array | Float64Array> {
  length = 0
  constructor(
    public data: A,
    private readonly make: (n: number) => A
  ) {}

  push(v: number): void {
    if (this.length === this.data.length) {
      const next = this.make(this.data.length * 2)
      next.set(this.data)
      this.data = next
    }
    this.data[this.length++] = v
  }
}

/**
 * The lowest event number a stream's index entries are safe from (definite discard points only;
 * a tombstoned stream under UnsafeIgnoreHardDeletes, and a tombstoned stream's metastream, lose every entry).
 */
const dropBoundOf = (
  original: OriginalStreamData | undefined,
  metastream: MetastreamData | undefined,
  unsafeIgnoreHardDeletes: boolean
): number => {
  let bound = 0
  if (original !== undefined)
    bound = original.isTombstoned && unsafeIgnoreHardDeletes ? Infinity : original.discardPoint
  if (metastream !== undefined) bound = Math.max(bound, metastream.isTombstoned ? Infinity : metastream.discardPoint)
  return bound
}

export class StreamsByHash {
  private constructor(
    private readonly hi: Uint32Array,
    private readonly lo: Uint32Array,
    private readonly users: Uint32Array,
    private readonly bounds: Float64Array
  ) {}

  /** Walks the state's streams (this session's writes included) and keeps their hashes. */
  static build<E>(ctx: RunContext<E>): Effect.Effect<StreamsByHash, E> {
    const hi = new Growing(new Uint32Array(1024), (n) => new Uint32Array(n))
    const lo = new Growing(new Uint32Array(1024), (n) => new Uint32Array(n))
    const bounds = new Growing(new Float64Array(1024), (n) => new Float64Array(n))
    const unsafe = ctx.options.unsafeIgnoreHardDeletes
    const walk = ctx.state.streamsWithData((name, original, metastream) => {
      const hash = ctx.engine.index.hashOf(name)
      hi.push(hash.hi)
      lo.push(hash.lo)
      bounds.push(dropBoundOf(original, metastream, unsafe))
    })
    return Effect.map(walk, () =>
      StreamsByHash.sorted(
        hi.data.subarray(0, hi.length),
        lo.data.subarray(0, lo.length),
        bounds.data.subarray(0, bounds.length)
      )
    )
  }

  private static sorted(hi: Uint32Array, lo: Uint32Array, bounds: Float64Array): StreamsByHash {
    const order = new Uint32Array(hi.length)
    for (let i = 0; i < order.length; i++) order[i] = i
    order.sort((a, b) => hi[a]! - hi[b]! || lo[a]! - lo[b]!)
    const outHi = new Uint32Array(order.length)
    const outLo = new Uint32Array(order.length)
    const users = new Uint32Array(order.length)
    const outBounds = new Float64Array(order.length)
    let n = 0
    for (const i of order) {
      if (n > 0 && outHi[n - 1] === hi[i] && outLo[n - 1] === lo[i]) {
        users[n - 1]!++
        outBounds[n - 1] = Math.max(outBounds[n - 1]!, bounds[i]!)
        continue
      }
      outHi[n] = hi[i]!
      outLo[n] = lo[i]!
      users[n] = 1
      outBounds[n] = bounds[i]!
      n++
    }
    return new StreamsByHash(outHi.slice(0, n), outLo.slice(0, n), users.slice(0, n), outBounds.slice(0, n))
  }

  private find(hi: number, lo: number): number {
    let a = 0
    let b = this.hi.length - 1
    while (a <= b) {
      const mid = (a + b) >>> 1
      const order = this.hi[mid]! - hi || this.lo[mid]! - lo
      if (order === 0) return mid
      if (order < 0) a = mid + 1
      else b = mid - 1
    }
    return -1
  }

  /** Whether some stream with state has this hash. */
  has(hi: number, lo: number): boolean {
    return this.find(hi, lo) >= 0
  }

  /** Whether two or more streams with state have this hash. */
  isShared(hi: number, lo: number): boolean {
    const at = this.find(hi, lo)
    return at >= 0 && this.users[at]! > 1
  }

  /**
   * Index entries with this hash and an event number at or above this are kept whichever stream they
   * belong to (0 when no stream with state has the hash).
   */
  dropBelow(hi: number, lo: number): number {
    const at = this.find(hi, lo)
    return at < 0 ? 0 : this.bounds[at]!
  }
}
