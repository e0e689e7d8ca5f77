import { describe, expect, it } from "vitest"
import { BufferPool, takeBuffer } from "../src/log/BufferPool.js"

describe("BufferPool", () => {
  it("hands a given-back buffer out again, the smallest that fits, and never to two holders", () => {
    const pool = new BufferPool()
    const a = pool.take(100)
    const b = pool.take(100)
    expect(a).not.toBe(b)
    expect(a.length).toBeGreaterThanOrEqual(100)
    const big = pool.take(1000)
    pool.give(big)
    pool.give(a)
    expect(pool.idleBytes).toBe(big.length + a.length)
    expect(pool.take(50)).toBe(a)
    expect(pool.take(50)).toBe(big)
    expect(pool.take(50)).not.toBe(b)
    expect(pool.idleBytes).toBe(0)
  })

  it("allocates when nothing idle is big enough, and without a pool", () => {
    const pool = new BufferPool()
    pool.give(Buffer.alloc(10))
    expect(pool.take(20).length).toBe(20)
    expect(pool.idleBytes).toBe(10)
    expect(takeBuffer(undefined, 30).length).toBe(30)
    pool.clear()
    expect(pool.idleBytes).toBe(0)
  })
})
