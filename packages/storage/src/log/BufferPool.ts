/**
 * Large buffers handed from one chunk pass to the next within one scavenge run (the run makes one pool and
 * drops it when it ends). Each pass over a 256 MiB chunk needs ~20 MiB of scratch: two read pieces, the new
 * file's write piece, the position map it builds. Allocated per pass, they are garbage V8 frees only at a
 * collection, and it lets up to 64 MiB of such external memory pile up before it runs one: measured, the
 * peak RSS of a 2 GiB scavenge was 40-80 MiB above what the passes held live. Taken from and given back to a
 * pool, the same few buffers serve every pass.
 *
 * `take` hands out a buffer no other holder has (concurrent passes get their own); `give` returns it.
 */
export class BufferPool {
  private readonly free: Array<Buffer> = []

  /** A buffer of at least `bytes` bytes (its contents are whatever the last holder left). */
  take(bytes: number): Buffer {
    let best = -1
    for (let i = 0; i < this.free.length; i++) {
      const length = this.free[i]!.length
      if (length >= bytes && (best < 0 || length < this.free[best]!.length)) best = i
    }
    if (best < 0) return Buffer.allocUnsafeSlow(bytes)
    return this.free.splice(best, 1)[0]!
  }

  /** Returns a buffer `take` handed out (never a view of one): the caller no longer uses it. */
  give(buffer: Buffer): void {
    this.free.push(buffer)
  }

  /** Lets every idle buffer go (the passes that reuse them are over; they are freed at the next collection). */
  clear(): void {
    this.free.length = 0
  }

  /** Bytes held for reuse (for tests). */
  get idleBytes(): number {
    let bytes = 0
    for (const buffer of this.free) bytes += buffer.length
    return bytes
  }
}

/** Takes from `pool` when there is one, else allocates (callers that run once keep no pool). */
export const takeBuffer = (pool: BufferPool | undefined, bytes: number): Buffer =>
  pool === undefined ? Buffer.allocUnsafeSlow(bytes) : pool.take(bytes)
