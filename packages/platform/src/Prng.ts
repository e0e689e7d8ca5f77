/**
 * A small, fast, seedable PRNG (xoshiro128**, seeded through splitmix32) for everything the simulator
 * and the in-memory disk must make reproducible: fault injection, workload choices, sub-seeds.
 *
 * Production code does not use this directly; it takes randomness from Effect's `Random` service.
 * A `Prng` can `fork(label)` an independent stream, so adding draws in one subsystem does not reshuffle
 * the choices of another (TigerBeetle/FoundationDB-style seed trees).
 */
const splitmix32 = (state: number): [number, number] => {
  const next = (state + 0x9e3779b9) | 0
  let z = next
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b)
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35)
  return [(z ^ (z >>> 16)) >>> 0, next]
}

/** FNV-1a over a string, used to mix labels into seeds. */
const hashLabel = (label: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < label.length; i++) {
    h ^= label.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

export class Prng {
  private a: number
  private b: number
  private c: number
  private d: number

  /** `seed` is any safe integer (a 64-bit seed is taken as its low 53 bits) or a bigint. */
  constructor(readonly seed: number | bigint) {
    const big = BigInt.asUintN(64, BigInt(seed))
    let s = Number(big & 0xffffffffn) ^ Math.imul(Number(big >> 32n), 0x27d4eb2d)
    let v: number
    ;[v, s] = splitmix32(s)
    this.a = v
    ;[v, s] = splitmix32(s)
    this.b = v
    ;[v, s] = splitmix32(s)
    this.c = v
    ;[v, s] = splitmix32(s)
    this.d = v
    if ((this.a | this.b | this.c | this.d) === 0) this.a = 1
  }

  /** Next unsigned 32-bit integer. */
  nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.b, 5), 7), 9) >>> 0
    const t = this.b << 9
    this.c ^= this.a
    this.d ^= this.b
    this.b ^= this.c
    this.a ^= this.d
    this.c ^= t
    this.d = rotl(this.d, 11)
    return result
  }

  /** Uniform float in [0, 1). */
  next(): number {
    return this.nextU32() / 4294967296
  }

  /** Uniform integer in [min, max] (inclusive). */
  int(min: number, max: number): number {
    if (max < min) throw new RangeError(`Prng.int: max ${max} < min ${min}`)
    const span = max - min + 1
    if (span <= 4294967296) return min + Math.floor(this.next() * span)
    return min + Math.floor(((this.nextU32() * 4294967296 + this.nextU32()) / 18446744073709551616) * span)
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return p > 0 && this.next() < p
  }

  pick<A>(items: ReadonlyArray<A>): A {
    if (items.length === 0) throw new RangeError("Prng.pick: empty array")
    return items[this.int(0, items.length - 1)]!
  }

  /** An independent generator derived from this one's seed and a label; does not advance this one. */
  fork(label: string): Prng {
    const big = BigInt.asUintN(64, BigInt(this.seed))
    const mixed = BigInt.asUintN(64, big * 0x9e3779b97f4a7c15n + BigInt(hashLabel(label)) * 0xbf58476d1ce4e5b9n + 1n)
    return new Prng(mixed)
  }

  /** A 53-bit sub-seed, e.g. for Effect's `Random.make`. */
  nextSeed(): number {
    return (this.nextU32() & 0x1fffff) * 4294967296 + this.nextU32()
  }
}

const rotl = (x: number, k: number): number => ((x << k) | (x >>> (32 - k))) >>> 0
