/**
 * A per-node Effect scheduler that the simulator steps by hand: tasks (fiber run slices) are queued,
 * never run on their own, so nothing reaches the microtask queue or real timers.
 *
 * This is the version-specific glue for effect 3's `Scheduler` interface (`scheduleTask`,
 * `shouldYield`); effect 4 replaces it with dispatchers, so keep every use of that interface here.
 */
import { FiberRef, Scheduler } from "effect"
import type { Fiber } from "effect"

type Task = Scheduler.Task

/**
 * FIFO ring buffer of tasks (power-of-two capacity). Unlike `Array.shift`, or resetting an array's
 * length whenever it empties, it allocates nothing in steady state: a node often holds just one task.
 */
class TaskQueue {
  private items: Array<Task | undefined> = new Array(16)
  private head = 0
  size = 0

  push(task: Task): void {
    if (this.size === this.items.length) this.grow()
    this.items[(this.head + this.size) & (this.items.length - 1)] = task
    this.size++
  }

  shift(): Task {
    const task = this.items[this.head]!
    this.items[this.head] = undefined // drop the reference for the GC
    this.head = (this.head + 1) & (this.items.length - 1)
    this.size--
    return task
  }

  clear(): void {
    this.items = new Array(16)
    this.head = 0
    this.size = 0
  }

  private grow(): void {
    const old = this.items
    const next: Array<Task | undefined> = new Array(old.length * 2)
    for (let i = 0; i < this.size; i++) next[i] = old[(this.head + i) & (old.length - 1)]
    this.items = next
    this.head = 0
  }
}

interface Bucket {
  readonly priority: number
  readonly queue: TaskQueue
}

/** Thrown by `runUntilIdle` when a node never goes idle: a livelock, or a budget set too low. */
export class SimLivelockError extends Error {
  constructor(
    readonly schedulerName: string,
    readonly maxTasks: number
  ) {
    super(`SimScheduler "${schedulerName}" still had runnable tasks after ${maxTasks} tasks (livelock?)`)
    this.name = "SimLivelockError"
  }
}

export interface SimSchedulerOptions {
  /** Used in error messages. */
  readonly name?: string
  /**
   * Ops a fiber runs before it must yield. Default: the fiber's `currentMaxOpsBeforeYield` (2048), as
   * effect's own schedulers do. Lower values interleave fibers more finely.
   */
  readonly maxOpsBeforeYield?: number
}

/**
 * Tasks run lowest priority number first (as effect's `PriorityBuckets`), FIFO within a priority, one
 * task per `step()`. `paused` keeps tasks queued; `crash()` parks them (and any later ones) so they
 * never run during the simulation; `release()` lets them run at teardown (see `SimWorld.dispose`).
 */
export class SimScheduler implements Scheduler.Scheduler {
  readonly name: string
  /** A paused scheduler keeps its tasks queued and `step()` runs nothing. */
  paused = false
  /** Tasks run since creation. */
  tasksRun = 0
  private crashed = false
  private released = false
  /** Work handed to a crashed scheduler. Kept, not dropped, only so teardown can let fibers end. */
  private parked: Array<Task> = []
  private count = 0
  /** Sorted by ascending priority; kept when empty (few priorities exist, usually only 0). */
  private buckets: Array<Bucket> = []
  private readonly maxOps: number | undefined

  constructor(options: SimSchedulerOptions = {}) {
    this.name = options.name ?? "sim"
    this.maxOps = options.maxOpsBeforeYield
  }

  scheduleTask(task: Task, priority: number, _fiber?: Fiber.RuntimeFiber<unknown, unknown>): void {
    if (this.crashed && !this.released) {
      this.parked.push(task) // a power-cut node: the work never runs while the simulation goes on
      return
    }
    const buckets = this.buckets
    let i = 0
    while (i < buckets.length && buckets[i].priority < priority) i++
    let bucket = buckets[i]
    if (bucket === undefined || bucket.priority !== priority) {
      bucket = { priority, queue: new TaskQueue() }
      buckets.splice(i, 0, bucket)
    }
    bucket.queue.push(task)
    this.count++
  }

  shouldYield(fiber: Fiber.RuntimeFiber<unknown, unknown>): number | false {
    if (this.maxOps === undefined) return Scheduler.defaultShouldYield(fiber)
    return fiber.currentOpCount > this.maxOps ? fiber.getFiberRef(FiberRef.currentSchedulingPriority) : false
  }

  /** Queued tasks (including those of a paused scheduler). */
  get pending(): number {
    return this.count
  }

  get isCrashed(): boolean {
    return this.crashed
  }

  /** Tasks parked by a crash (they are not `pending`: nothing will run them during the run). */
  get parkedCount(): number {
    return this.parked.length
  }

  /** True when `step()` would run something. */
  get runnable(): boolean {
    return this.count > 0 && !this.paused
  }

  /** Runs the next task. Returns false if none is queued or the scheduler is paused or crashed. */
  step(): boolean {
    if (this.paused || this.count === 0) return false
    const buckets = this.buckets
    let i = 0
    while (buckets[i].queue.size === 0) i++
    const task = buckets[i].queue.shift()
    this.count--
    this.tasksRun++
    task()
    return true
  }

  /** Runs up to `maxTasks` tasks, stopping early when idle or paused. Returns how many ran. */
  runSlice(maxTasks: number): number {
    let n = 0
    while (n < maxTasks && this.step()) n++
    return n
  }

  /**
   * Runs tasks until none is queued. Throws `SimLivelockError` when more than `maxTasks` were needed,
   * e.g. fibers that keep yielding to each other without ever sleeping. Returns how many ran.
   */
  runUntilIdle(maxTasks = 1_000_000): number {
    let n = 0
    while (this.step()) {
      if (++n >= maxTasks && this.runnable) throw new SimLivelockError(this.name, maxTasks)
    }
    return n
  }

  /**
   * Power cut: queued and later tasks are parked and never run during the simulation, so the node's
   * fibers stay suspended and no finalizer runs.
   */
  crash(): void {
    if (this.crashed) return
    this.crashed = true
    for (const bucket of this.buckets) {
      while (bucket.queue.size > 0) this.parked.push(bucket.queue.shift())
    }
    this.count = 0
  }

  /**
   * Teardown only: makes parked and future tasks runnable again, so a crashed node's fibers can be
   * interrupted and end (otherwise effect's global root-fiber set keeps them, and all they reference,
   * alive for the life of the process).
   */
  release(): void {
    if (!this.crashed || this.released) return
    this.released = true
    const parked = this.parked
    this.parked = []
    for (const task of parked) this.scheduleTask(task, 0)
  }
}
