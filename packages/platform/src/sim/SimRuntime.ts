/**
 * The world loop: one simulated clock, named nodes each with its own scheduler, a seeded PRNG choosing
 * which runnable node steps next, and a rolling trace hash. Everything runs synchronously on the
 * caller's stack: no Promise, microtask or real timer is involved.
 *
 *   1. step runnable nodes (random node, bounded slice of its tasks) until every node is idle;
 *   2. move the clock to the next timer and fire every timer due then (queues the sleepers);
 *   3. repeat until the stop condition, a budget, or quiescence (no work and no timer).
 */
import { Effect, Fiber, FiberId, Random } from "effect"
import type { Exit, Scheduler } from "effect"
import { Prng } from "../Prng.js"
import { SimClock, type SimClockView } from "./SimClock.js"
import { SimScheduler } from "./SimScheduler.js"

export type SimNodeState = "running" | "paused" | "crashed"

/** One incarnation of a node: a restart creates a new `SimNode` under the same name. */
export class SimNode {
  constructor(
    readonly name: string,
    readonly incarnation: number,
    readonly scheduler: SimScheduler,
    readonly clock: SimClockView,
    /** The node's `Random` service: one seeded stream shared by all of its fibers. */
    readonly random: Random.Random
  ) {}

  get state(): SimNodeState {
    return this.scheduler.isCrashed ? "crashed" : this.scheduler.paused ? "paused" : "running"
  }
}

export interface SimWorldOptions {
  /** The one seed everything derives from. */
  readonly seed: number | bigint
  /** Simulated wall time at start (ms since the Unix epoch); default 2026-01-01T00:00:00Z. */
  readonly epochMs?: number
  /** Largest number of tasks a node runs before the world picks a node again (default 16). */
  readonly maxSlice?: number
  /** Keep the last N trace lines for diffing two runs (default 0: hash only). */
  readonly traceLines?: number
  /** Also hash every scheduling decision (node, slice size) and time advance (default false). */
  readonly traceSchedule?: boolean
  /** Passed to every node's scheduler; see `SimSchedulerOptions.maxOpsBeforeYield`. */
  readonly maxOpsBeforeYield?: number
}

export interface SimNodeOptions {
  /** Wall-clock skew of this node relative to the world, in ms (can be changed later on `clock`). */
  readonly clockOffsetMs?: number
}

export interface SimRunOptions {
  /** Checked after every slice and before every time advance; the run stops once it returns true. */
  readonly until?: () => boolean
  /** Simulated-time budget for this call, in ms from its start. */
  readonly maxSimMs?: number
  /** Budget of scheduler tasks for this call. */
  readonly maxSteps?: number
}

export type SimStopReason = "condition" | "quiescent" | "time-limit" | "step-limit"

export interface SimRunResult {
  readonly reason: SimStopReason
  /** Scheduler tasks run by this call. */
  readonly steps: number
  /** Simulated ms that passed during this call. */
  readonly elapsedMs: number
}

/** A run that could not finish: deadlock (quiescent while still suspended) or an exhausted budget. */
export class SimRunError extends Error {
  constructor(
    readonly reason: Exclude<SimStopReason, "condition">,
    message: string
  ) {
    super(message)
    this.name = "SimRunError"
  }
}

// FNV-1a 64-bit, kept as two 32-bit halves. Prime = 2^40 + 0x1b3, so h * prime = h * 0x1b3 + (h << 40).
const FNV_OFFSET_HI = 0xcbf29ce4
const FNV_OFFSET_LO = 0x84222325

export class SimWorld {
  readonly seed: number | bigint
  readonly clock: SimClock
  readonly prng: Prng
  private readonly schedulePrng: Prng
  private readonly nodes = new Map<string, SimNode>()
  /** Current incarnations in creation order, so the runnable scan is deterministic. */
  private nodeList: Array<SimNode> = []
  private readonly runnableBuf: Array<SimNode> = []
  /** Every incarnation's scheduler, crashed ones included, for `dispose`. */
  private readonly allSchedulers = new Set<SimScheduler>()
  private disposed = false
  private readonly maxSlice: number
  private readonly maxOps: number | undefined
  private readonly traceSchedule: boolean
  private hashHi = FNV_OFFSET_HI
  private hashLo = FNV_OFFSET_LO
  private readonly lineLimit: number
  private lines: Array<string> = []
  private lineStart = 0
  /** Number of `trace` events so far. */
  traceCount = 0
  /** Scheduler tasks run by all `run` calls. */
  totalSteps = 0

  constructor(options: SimWorldOptions) {
    this.seed = options.seed
    this.prng = new Prng(options.seed)
    this.schedulePrng = this.prng.fork("world:schedule")
    this.clock = new SimClock(options.epochMs === undefined ? {} : { epochMs: options.epochMs })
    this.maxSlice = Math.max(1, Math.floor(options.maxSlice ?? 16))
    this.maxOps = options.maxOpsBeforeYield
    this.traceSchedule = options.traceSchedule ?? false
    this.lineLimit = Math.max(0, Math.floor(options.traceLines ?? 0))
  }

  /** World time in ms (without any node's clock offset). */
  get now(): number {
    return this.clock.currentMillis
  }

  // --- Nodes ----------------------------------------------------------------------------------------

  /** Creates a node (its first incarnation). Throws if the name is taken. */
  addNode(name: string, options: SimNodeOptions = {}): SimNode {
    if (this.nodes.has(name)) throw new Error(`SimWorld: node "${name}" already exists`)
    return this.install(name, 0, options.clockOffsetMs ?? 0)
  }

  /** The current incarnation of `name`. */
  node(name: string): SimNode {
    const node = this.nodes.get(name)
    if (node === undefined) throw new Error(`SimWorld: no node "${name}"`)
    return node
  }

  hasNode(name: string): boolean {
    return this.nodes.has(name)
  }

  get nodeNames(): ReadonlyArray<string> {
    return this.nodeList.map((n) => n.name)
  }

  /**
   * Runs `effect` as a new root fiber on the node (created on first use) with the node's clock view
   * and seeded `Random`. The fiber only starts when the world steps the node.
   */
  fork<A, E>(nodeName: string, effect: Effect.Effect<A, E>): Fiber.RuntimeFiber<A, E> {
    this.assertLive("fork")
    const node = this.nodes.get(nodeName) ?? this.install(nodeName, 0, 0)
    if (node.state === "crashed") throw new Error(`SimWorld.fork: node "${nodeName}" has crashed; restart it first`)
    const program = effect.pipe(Effect.withClock(node.clock), Effect.withRandom(node.random))
    // immediate: false queues the first run on the node's scheduler instead of running it here.
    return Effect.runFork(program, { scheduler: node.scheduler, immediate: false })
  }

  /**
   * Power cut: the node's queued tasks never run, its timers are removed and never fire, and no
   * finalizer runs. Its fibers stay suspended forever.
   */
  crash(nodeName: string): void {
    const node = this.node(nodeName)
    if (node.state === "crashed") return
    node.scheduler.crash()
    this.clock.cancelOwner(node.clock.owner)
    if (this.traceSchedule) this.traceEvent(`crash ${nodeName}#${node.incarnation}`)
  }

  /**
   * A fresh incarnation of the node (crashing the old one first if needed): new scheduler, new timer
   * owner, new Random stream. Rebuilding the node's services from its disk is the caller's job.
   */
  restart(nodeName: string): SimNode {
    const old = this.node(nodeName)
    this.crash(nodeName)
    return this.install(nodeName, old.incarnation + 1, old.clock.offsetMs)
  }

  /**
   * Time passes with nothing stepped, as while a crashed node is down: the clock moves `ms` forward and
   * timers due on the way fire (their fibers run at the next `run`). Traced, so a replay covers it.
   */
  advance(ms: number): void {
    this.assertLive("advance")
    this.clock.advanceBy(ms)
    if (this.traceSchedule) this.mixTime()
  }

  /** Stops stepping the node. Its timers still fire; the woken fibers wait until `resume`. */
  pause(nodeName: string): void {
    const node = this.node(nodeName)
    if (node.state !== "crashed") node.scheduler.paused = true
  }

  resume(nodeName: string): void {
    this.node(nodeName).scheduler.paused = false
  }

  private install(name: string, incarnation: number, offsetMs: number): SimNode {
    const owner = this.clock.allocateOwner()
    const seed = this.prng.fork(`node:${name}#${incarnation}`).nextSeed()
    const scheduler = new SimScheduler(this.maxOps === undefined ? { name } : { name, maxOpsBeforeYield: this.maxOps })
    const node = new SimNode(name, incarnation, scheduler, this.clock.view({ owner, offsetMs }), Random.make(seed))
    this.allSchedulers.add(scheduler)
    const previous = this.nodes.get(name)
    this.nodes.set(name, node)
    if (previous === undefined) this.nodeList.push(node)
    else this.nodeList = this.nodeList.map((n) => (n === previous ? node : n))
    return node
  }

  // --- The loop -------------------------------------------------------------------------------------

  /** Runs the world until the condition holds, a budget runs out, or nothing can happen any more. */
  run(options: SimRunOptions = {}): SimRunResult {
    this.assertLive("run")
    const until = options.until
    const maxSteps = options.maxSteps ?? Infinity
    const start = this.clock.currentMillis
    const deadline = options.maxSimMs === undefined ? Infinity : start + options.maxSimMs
    const clock = this.clock
    const buf = this.runnableBuf
    const list = this.nodeList
    const maxSlice = this.maxSlice
    let steps = 0
    const result = (reason: SimStopReason): SimRunResult => {
      this.totalSteps += steps
      return { reason, steps, elapsedMs: clock.currentMillis - start }
    }
    if (until !== undefined && until()) return result("condition")
    while (true) {
      // 1. Step runnable nodes until all are idle, in PRNG-chosen slices.
      while (true) {
        let k = 0
        for (let i = 0; i < list.length; i++) if (list[i].scheduler.runnable) buf[k++] = list[i]
        if (k === 0) break
        if (steps >= maxSteps) return result("step-limit")
        let node: SimNode
        let slice: number
        if (k === 1) {
          // No choice to make: skip the draws (still deterministic, and cheaper).
          node = buf[0]
          slice = maxSlice
        } else {
          node = buf[this.schedulePrng.int(0, k - 1)]
          slice = maxSlice === 1 ? 1 : this.schedulePrng.int(1, maxSlice)
        }
        const ran = node.scheduler.runSlice(Math.min(slice, maxSteps - steps))
        steps += ran
        if (this.traceSchedule) {
          this.mixU32(list.indexOf(node))
          this.mixU32(ran)
        }
        if (until !== undefined && until()) return result("condition")
      }
      if (until !== undefined && until()) return result("condition")
      // 2. Advance time to the next timer, within the budget.
      const due = clock.nextDue()
      if (due === undefined) return result("quiescent")
      if (due > deadline) {
        clock.advanceTo(deadline)
        return result("time-limit")
      }
      clock.advanceToNext()
      if (this.traceSchedule) this.mixTime()
    }
  }

  // --- Teardown -----------------------------------------------------------------------------------

  /**
   * Ends the world so it can be garbage-collected. Effect 3 keeps every root fiber that has not exited
   * in a process-wide set, so a world whose nodes still have suspended fibers (servers, crashed or
   * paused nodes) would otherwise stay in memory with everything those fibers reference (disks...).
   * This interrupts every root fiber running on one of this world's schedulers (crashed incarnations
   * included) and pumps until they end or `maxSteps` tasks ran. Finalizers do run here, after the
   * simulation: do checks first. Returns how many such fibers are still alive. The world is unusable
   * afterwards.
   */
  dispose(maxSteps = 1_000_000): number {
    if (this.disposed) return 0
    this.disposed = true
    const schedulers = this.allSchedulers
    const mine: ReadonlySet<Scheduler.Scheduler> = schedulers
    const ours = () => Fiber.unsafeRoots().filter((f) => mine.has(f.currentScheduler))
    for (const s of schedulers) {
      s.paused = false
      s.release()
    }
    this.clock.reviveOwners()
    let steps = 0
    // Two rounds: finalizers of the first may fork daemon fibers of their own.
    for (let round = 0; round < 2; round++) {
      for (const f of ours()) f.unsafeInterruptAsFork(FiberId.none)
      while (steps < maxSteps) {
        let ran = 0
        for (const s of schedulers) ran += s.runSlice(maxSteps - steps - ran)
        steps += ran
        if (ran === 0 && !this.clock.advanceToNext()) break
      }
    }
    return ours().length
  }

  private assertLive(what: string): void {
    if (this.disposed) throw new Error(`SimWorld.${what}: the world has been disposed`)
  }

  // --- Trace ----------------------------------------------------------------------------------------

  /** Folds an event (and the current world time) into the rolling hash; keeps the line if asked to. */
  trace(event: string): void {
    this.traceEvent(event)
  }

  /** The rolling FNV-1a 64-bit hash of every traced event, as 16 hex digits. */
  get traceHash(): string {
    return this.hashHi.toString(16).padStart(8, "0") + this.hashLo.toString(16).padStart(8, "0")
  }

  /** The retained trace lines, oldest first (at most `traceLines` of them). */
  get traceLines(): ReadonlyArray<string> {
    return this.lines.slice(this.lineStart).concat(this.lines.slice(0, this.lineStart))
  }

  private traceEvent(event: string): void {
    this.traceCount++
    this.mixTime()
    for (let i = 0; i < event.length; i++) this.mixByte(event.charCodeAt(i))
    this.mixByte(0x0a) // separator, so ["ab", "c"] and ["a", "bc"] differ
    if (this.lineLimit > 0) {
      const line = `${this.clock.currentMillis} ${event}`
      if (this.lines.length < this.lineLimit) this.lines.push(line)
      else {
        this.lines[this.lineStart] = line
        this.lineStart = (this.lineStart + 1) % this.lineLimit
      }
    }
  }

  private mixTime(): void {
    const t = this.clock.currentMillis
    this.mixU32(t % 4294967296)
    this.mixU32(Math.floor(t / 4294967296))
  }

  private mixU32(n: number): void {
    this.mixByte(n & 0xff)
    this.mixByte((n >>> 8) & 0xff)
    this.mixByte((n >>> 16) & 0xff)
    this.mixByte((n >>> 24) & 0xff)
  }

  /** One FNV-1a round; UTF-16 code units above 0xff are folded in whole (fine for a fingerprint). */
  private mixByte(b: number): void {
    const lo = (this.hashLo ^ b) >>> 0
    const a = lo * 0x1b3 // < 2^41, exact in a double
    this.hashLo = a >>> 0
    this.hashHi = (Math.imul(this.hashHi, 0x1b3) + Math.floor(a / 4294967296) + (lo << 8)) >>> 0
  }
}

export interface RunSimOptions {
  readonly seed: number | bigint
  /** Simulated-time budget (default: none). */
  readonly maxSimMs?: number
  /** Scheduler-task budget (default 10 million). */
  readonly maxSteps?: number
  readonly epochMs?: number
}

/**
 * Runs `effect` on a one-node world until it completes and returns its Exit, synchronously. Throws
 * `SimRunError` if the world goes quiescent while the effect is still suspended (a deadlock) or a
 * budget runs out.
 */
export const runSim = <A, E>(effect: Effect.Effect<A, E>, options: RunSimOptions): Exit.Exit<A, E> => {
  const world = new SimWorld(
    options.epochMs === undefined ? { seed: options.seed } : { seed: options.seed, epochMs: options.epochMs }
  )
  const fiber = world.fork("main", effect)
  let result: SimRunResult
  let exit: Exit.Exit<A, E> | null
  try {
    result = world.run({
      until: () => fiber.unsafePoll() !== null,
      maxSteps: options.maxSteps ?? 10_000_000,
      ...(options.maxSimMs === undefined ? {} : { maxSimMs: options.maxSimMs })
    })
    exit = fiber.unsafePoll()
  } finally {
    world.dispose() // lets leftover fibers end; see SimWorld.dispose
  }
  if (exit !== null) return exit
  const at = `after ${result.elapsedMs} simulated ms and ${result.steps} tasks (seed ${options.seed})`
  switch (result.reason) {
    case "quiescent":
      throw new SimRunError(
        "quiescent",
        `runSim: deadlock: the effect is still suspended but nothing can wake it (no runnable task, no timer) ${at}`
      )
    case "time-limit":
      throw new SimRunError("time-limit", `runSim: the effect did not finish within maxSimMs=${options.maxSimMs} ${at}`)
    default:
      throw new SimRunError("step-limit", `runSim: the effect did not finish within maxSteps ${at}`)
  }
}
