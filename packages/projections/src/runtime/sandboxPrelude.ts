// The script every sandbox runs once, before any user code: it takes away what could reach outside or vary
// between runs, and returns the batch runner the host calls and the cursor the host reads (the item being run).
// It is an expression of one function, so nothing it keeps is reachable from user code: only closures hold it.
//
// - `eval` and the constructors of every function kind refuse: no code is compiled from strings.
// - `Date` reads a virtual clock that only the runner sets (per entry, from the host), and local time is UTC,
//   so neither the host clock nor its time zone shows through.
// - `Math.random` is a small seeded generator (mulberry32), reseeded at every entry from the host's seed.
export const sandboxPrelude = String.raw`(function (seed0) {
  "use strict"
  const refuse = function () { throw new EvalError("code generation from strings is disabled in projections") }
  const define = (o, k, v) => Object.defineProperty(o, k, { value: v, writable: false, enumerable: false, configurable: false })
  define(globalThis, "eval", refuse)
  const kinds = [function () {}, async function () {}, function* () {}, async function* () {}]
  for (const f of kinds) {
    const proto = Object.getPrototypeOf(f)
    define(proto, "constructor", refuse)
  }
  refuse.prototype = Function.prototype
  define(globalThis, "Function", refuse)

  let now = 0
  const RealDate = Date
  const D = function Date(...args) {
    if (new.target === undefined) return new RealDate(now).toUTCString()
    if (args.length === 0) return Reflect.construct(RealDate, [now], new.target)
    if (args.length === 1) return Reflect.construct(RealDate, args, new.target)
    return Reflect.construct(RealDate, [RealDate.UTC(...args)], new.target)
  }
  D.prototype = RealDate.prototype
  define(D, "now", function now_() { return now })
  define(D, "UTC", RealDate.UTC)
  define(D, "parse", RealDate.parse)
  const dp = RealDate.prototype
  define(dp, "constructor", D)
  for (const k of ["FullYear", "Month", "Date", "Day", "Hours", "Minutes", "Seconds", "Milliseconds"]) {
    define(dp, "get" + k, dp["getUTC" + k])
    if (k !== "Day") define(dp, "set" + k, dp["setUTC" + k])
  }
  define(dp, "getTimezoneOffset", function () { return 0 })
  for (const k of ["toString", "toLocaleString"]) define(dp, k, dp.toUTCString)
  for (const k of ["toDateString", "toLocaleDateString"]) define(dp, k, function () { return this.toISOString().slice(0, 10) })
  for (const k of ["toTimeString", "toLocaleTimeString"]) define(dp, k, function () { return this.toISOString().slice(11, 23) + "Z" })
  define(globalThis, "Date", D)

  let rng = seed0 >>> 0
  define(Math, "random", function random() {
    rng = (rng + 0x6d2b79f5) >>> 0
    let t = rng
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  })

  const parse = JSON.parse
  const stringify = JSON.stringify
  // One entry per item: the clock and the generator are set, the cursor moves (the host's budget restarts when
  // it sees it move), then the named function runs. A throw stops the batch; the cursor names the item.
  const cursor = { item: 0 }
  const runBatch = function (name, batchJson) {
    const batch = parse(batchJson)
    const fn = globalThis[name]
    if (typeof fn !== "function") throw new TypeError(name + " is not a function")
    const items = batch.items
    if (batch.now.length !== items.length || batch.seed.length !== items.length)
      throw new TypeError("a batch needs one clock and one seed per item")
    const results = []
    cursor.item = -1
    for (let i = 0; i < items.length; i++) {
      now = batch.now[i]
      rng = (seed0 ^ batch.seed[i]) >>> 0
      cursor.item = i
      results[i] = fn(items[i])
    }
    return stringify(results)
  }
  return { runBatch, cursor }
})`
