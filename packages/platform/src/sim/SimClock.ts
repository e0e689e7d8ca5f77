/**
 * Simulated time for the deterministic simulator: one clock per world, a binary heap of timers, and
 * per-node views (offset for clock-skew tests, owner id so a crashed node's timers can be cancelled).
 *
 * Nothing here touches real time. A timer firing only calls the `Effect.async` resume callback, which
 * queues the sleeping fiber on its own scheduler; the world loop then steps that scheduler. This is the
 * version-specific glue for effect 3's `Clock` interface: keep it in this file.
 */
import { Clock, Duration, Effect, Fiber } from "effect"

/** 2026-01-01T00:00:00Z, so simulated timestamps look like real ones in logs and Atom feeds. */
export const DEFAULT_SIM_EPOCH_MS = 1_767_225_600_000

/**
 * The live clock treats sleeps above this (setTimeout's limit, about 24.8 days) as infinite; we do the
 * same so a simulated run behaves like production rather than better than it.
 */
export const MAX_TIMER_MILLIS = 2 ** 31 - 1

/** The Effect.async resume callback, or a raw `schedule` callback (which ignores the argument). */
type Resume = (effect: Effect.Effect<void>) => void

/** Opaque handle of a raw timer made by `SimClock.schedule`. */
export interface SimTimer {
  /** Simulated time (world ms) at which it fires. */
  readonly due: number
}

/** One pending sleep. `index` is its heap slot (-1 once fired or cancelled) so removal is O(log n). */
interface Timer {
  readonly due: number
  readonly seq: number
  readonly owner: number
  resume: Resume | undefined
  index: number
}

/** The timer a fiber is (or was last) sleeping on; see `sleepAs`. */
interface SleepSlot {
  timer: Timer | undefined
}

const NANOS_PER_MILLI = BigInt(1_000_000)

/** Whole milliseconds, rounded up like a real timer; NaN/negative become 0, Infinity stays Infinity. */
const durationMillis = (duration: Duration.Duration): number => {
  const v = duration.value
  // Fast path: Effect.sleep("10 millis") and numbers decode to Millis; avoid the generic matcher.
  const ms = v._tag === "Millis" ? v.millis : Duration.toMillis(duration)
  if (!(ms > 0)) return 0
  return ms === Infinity ? Infinity : Math.ceil(ms)
}

/** A never-resuming sleep without the real `setInterval` that `Effect.never` creates in effect 3. */
const sleepForever: Effect.Effect<void> = Effect.async<void>(() => {})

const less = (a: Timer, b: Timer): boolean => a.due < b.due || (a.due === b.due && a.seq < b.seq)

export interface SimClockOptions {
  /** Simulated wall time at the start, in ms since the Unix epoch. Default: 2026-01-01T00:00:00Z. */
  readonly epochMs?: number
}

/**
 * The world's clock. It is itself a `Clock` (owner 0, no offset) and hands out per-node views that
 * share its timer queue: `withOffset(ms)` / `view({ owner, offsetMs })`.
 */
export class SimClock implements Clock.Clock {
  readonly [Clock.ClockTypeId]: Clock.ClockTypeId = Clock.ClockTypeId

  private now: number
  private seq = 0
  private readonly heap: Array<Timer> = []
  private readonly deadOwners = new Set<number>()
  private nextOwner = 1
  private readonly slots = new WeakMap<Fiber.RuntimeFiber<unknown, unknown>, SleepSlot>()
  /** Timers fired since creation (for benchmarks; includes the rare no-op fire of an interrupted sleep). */
  firedCount = 0

  constructor(options: SimClockOptions = {}) {
    this.now = Math.floor(options.epochMs ?? DEFAULT_SIM_EPOCH_MS)
  }

  // --- Clock interface (owner 0, no offset) ---------------------------------------------------------

  unsafeCurrentTimeMillis(): number {
    return this.now
  }

  unsafeCurrentTimeNanos(): bigint {
    return BigInt(this.now) * NANOS_PER_MILLI
  }

  readonly currentTimeMillis: Effect.Effect<number> = Effect.sync(() => this.now)

  readonly currentTimeNanos: Effect.Effect<bigint> = Effect.sync(() => BigInt(this.now) * NANOS_PER_MILLI)

  sleep(duration: Duration.Duration): Effect.Effect<void> {
    return this.sleepAs(0, duration)
  }

  // --- Views ----------------------------------------------------------------------------------------

  /** A view whose wall time is shifted by `offsetMs`; it shares the timer queue and owner 0. */
  withOffset(offsetMs: number): SimClockView {
    return new SimClockView(this, 0, offsetMs)
  }

  /** A view for one node incarnation; `cancelOwner(owner)` later drops every timer it created. */
  view(options: { readonly owner?: number; readonly offsetMs?: number } = {}): SimClockView {
    return new SimClockView(this, options.owner ?? 0, options.offsetMs ?? 0)
  }

  /** A fresh owner id (ids are never reused, so a restarted node cannot inherit old timers). */
  allocateOwner(): number {
    return this.nextOwner++
  }

  /**
   * Removes every pending timer of `owner` and ignores its future sleeps: the fibers behind them never
   * resume (a power cut, not an interruption).
   */
  cancelOwner(owner: number): number {
    if (owner === 0) throw new Error("SimClock.cancelOwner: owner 0 is the shared world clock")
    this.deadOwners.add(owner)
    const heap = this.heap
    let kept = 0
    for (let i = 0; i < heap.length; i++) {
      const t = heap[i]
      if (t.owner === owner) {
        t.resume = undefined
        t.index = -1
      } else {
        t.index = kept
        heap[kept++] = t
      }
    }
    const removed = heap.length - kept
    heap.length = kept
    // Floyd's heapify restores order in O(n); crashes are rare, so this is fine.
    for (let i = (kept >> 1) - 1; i >= 0; i--) this.siftDown(i)
    return removed
  }

  /** Teardown only: owners cancelled by `cancelOwner` may sleep again (finalizers at dispose). */
  reviveOwners(): void {
    this.deadOwners.clear()
  }

  // --- World-loop API -------------------------------------------------------------------------------

  /** Current simulated time in ms (the world's, without any view offset). */
  get currentMillis(): number {
    return this.now
  }

  /** Number of pending (not fired, not cancelled) timers. */
  get pendingTimers(): number {
    return this.heap.length
  }

  /** Due time of the earliest pending timer, or undefined when none is pending. */
  nextDue(): number | undefined {
    return this.heap.length === 0 ? undefined : this.heap[0].due
  }

  /**
   * Moves time to the earliest due timer and fires every timer due at that instant, in (due, insertion)
   * order. Returns false (and leaves time alone) when nothing is pending. Timers created while firing
   * (raw `schedule` callbacks with zero delay) wait for the next call, so this always terminates.
   */
  advanceToNext(): boolean {
    const heap = this.heap
    if (heap.length === 0) return false
    const due = heap[0].due
    const seqLimit = this.seq
    if (due > this.now) this.now = due
    while (heap.length > 0 && heap[0].due <= due && heap[0].seq < seqLimit) this.fire(this.popMin())
    return true
  }

  /**
   * Moves time forward by `ms`, firing every timer due on the way in order. Woken fibers only run when
   * their schedulers are stepped, so they all observe the final time; the world loop instead stops at
   * each due time (see `SimWorld.run`).
   */
  advanceBy(ms: number): number {
    if (!(ms >= 0)) throw new RangeError(`SimClock.advanceBy: ${ms} is not a non-negative duration`)
    return this.advanceTo(this.now + ms)
  }

  /**
   * Moves time to `target` (never backwards), firing timers due by then, including ones created while
   * firing (a raw callback rescheduling itself with zero delay would loop). Returns how many fired.
   */
  advanceTo(target: number): number {
    const heap = this.heap
    let fired = 0
    while (heap.length > 0 && heap[0].due <= target) {
      const t = this.popMin()
      if (t.due > this.now) this.now = t.due
      this.fire(t)
      fired++
    }
    if (target > this.now) this.now = Math.floor(target)
    return fired
  }

  /**
   * A raw timer without a fiber: `callback` runs synchronously inside `advanceToNext`/`advanceTo`
   * after `delayMs` (rounded up to whole ms). For simulator machinery such as network delivery; it
   * must only queue work, not run node code. Returns a handle for `cancelTimer`.
   */
  schedule(delayMs: number, callback: () => void, owner = 0): SimTimer {
    const ms = delayMs > 0 ? Math.ceil(delayMs) : 0
    // A dead owner's timer is born cancelled, like its sleeps.
    if (owner !== 0 && this.deadOwners.has(owner)) {
      const dead: Timer = { due: this.now + ms, seq: -1, owner, resume: undefined, index: -1 }
      return dead
    }
    return this.insert(this.now + ms, owner, callback)
  }

  /** Cancels a `schedule`d timer; returns false if it already fired or was cancelled. */
  cancelTimer(timer: SimTimer): boolean {
    const pending = (timer as Timer).index >= 0
    this.cancel(timer as Timer)
    return pending
  }

  // --- Internals ------------------------------------------------------------------------------------

  /**
   * The body of every view's `sleep`.
   *
   * No canceler is returned to `Effect.async`: with one, effect 3 wraps every sleep in `onInterrupt`,
   * which about halved wake-up throughput (measured, bench/src/clock.ts). Interruption is still safe,
   * since the fiber ignores a resume after it was interrupted, and the stale timer is removed as soon
   * as that fiber sleeps again or exits (a fiber waits on one async at a time), so it neither fires
   * nor holds time back in practice.
   */
  sleepAs(owner: number, duration: Duration.Duration): Effect.Effect<void> {
    const ms = durationMillis(duration)
    if (ms > MAX_TIMER_MILLIS) return sleepForever
    return Effect.async<void>((resume) => {
      if (owner !== 0 && this.deadOwners.has(owner)) return
      const timer = this.insert(this.now + ms, owner, resume)
      // The register callback runs on the sleeping fiber, so this is that fiber.
      const current = Fiber.getCurrentFiber()
      if (current._tag === "None") return Effect.sync(() => this.cancel(timer)) // defensive fallback
      const fiber = current.value
      const slot = this.slots.get(fiber)
      if (slot === undefined) {
        const fresh: SleepSlot = { timer }
        this.slots.set(fiber, fresh)
        fiber.addObserver(() => {
          if (fresh.timer !== undefined) this.cancel(fresh.timer)
          fresh.timer = undefined
        })
      } else {
        const previous = slot.timer
        if (previous !== undefined && previous.index >= 0) this.cancel(previous) // interrupted out of it
        slot.timer = timer
      }
    })
  }

  private insert(due: number, owner: number, resume: Resume): Timer {
    const heap = this.heap
    const timer: Timer = { due, seq: this.seq++, owner, resume, index: heap.length }
    heap.push(timer)
    this.siftUp(timer.index)
    return timer
  }

  /** Interruption of a sleep: remove the timer if it has not fired yet. */
  private cancel(timer: Timer): void {
    const i = timer.index
    timer.resume = undefined
    if (i < 0) return
    timer.index = -1
    const heap = this.heap
    const last = heap.pop()!
    if (i === heap.length) return
    heap[i] = last
    last.index = i
    if (i > 0 && less(last, heap[(i - 1) >> 1])) this.siftUp(i)
    else this.siftDown(i)
  }

  private fire(timer: Timer): void {
    const resume = timer.resume
    timer.resume = undefined
    if (resume !== undefined) {
      this.firedCount++
      resume(Effect.void)
    }
  }

  private popMin(): Timer {
    const heap = this.heap
    const top = heap[0]
    const last = heap.pop()!
    top.index = -1
    if (heap.length > 0) {
      heap[0] = last
      last.index = 0
      this.siftDown(0)
    }
    return top
  }

  private siftUp(i: number): void {
    const heap = this.heap
    const t = heap[i]
    while (i > 0) {
      const p = (i - 1) >> 1
      const parent = heap[p]
      if (!less(t, parent)) break
      heap[i] = parent
      parent.index = i
      i = p
    }
    heap[i] = t
    t.index = i
  }

  private siftDown(i: number): void {
    const heap = this.heap
    const n = heap.length
    const t = heap[i]
    while (true) {
      const l = 2 * i + 1
      if (l >= n) break
      const r = l + 1
      const c = r < n && less(heap[r], heap[l]) ? r : l
      const child = heap[c]
      if (!less(child, t)) break
      heap[i] = child
      child.index = i
      i = c
    }
    heap[i] = t
    t.index = i
  }
}

/**
 * A node's view of the world clock: same timer queue, optional wall-clock offset (mutable, for skew
 * tests; only the world time is monotonic, a view's offset may be stepped like NTP would).
 */
export class SimClockView implements Clock.Clock {
  readonly [Clock.ClockTypeId]: Clock.ClockTypeId = Clock.ClockTypeId

  constructor(
    readonly world: SimClock,
    readonly owner: number,
    public offsetMs: number
  ) {}

  unsafeCurrentTimeMillis(): number {
    // Floored so a fractional offset cannot make the nanosecond BigInt conversion throw.
    return this.world.currentMillis + Math.floor(this.offsetMs)
  }

  unsafeCurrentTimeNanos(): bigint {
    return BigInt(this.unsafeCurrentTimeMillis()) * NANOS_PER_MILLI
  }

  readonly currentTimeMillis: Effect.Effect<number> = Effect.sync(() => this.unsafeCurrentTimeMillis())

  readonly currentTimeNanos: Effect.Effect<bigint> = Effect.sync(() => this.unsafeCurrentTimeNanos())

  sleep(duration: Duration.Duration): Effect.Effect<void> {
    return this.world.sleepAs(this.owner, duration)
  }
}
