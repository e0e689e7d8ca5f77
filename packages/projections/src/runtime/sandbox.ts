import { assert } from "@vellum/platform"
import { Effect, type Scope } from "effect"
import {
  newQuickJSWASMModule,
  RELEASE_SYNC,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSWASMModule
} from "quickjs-emscripten"
import { sandboxPrelude } from "./sandboxPrelude.js"
import {
  SandboxBroken,
  SandboxOutOfMemory,
  SandboxScriptError,
  SandboxTimeout,
  type SandboxError
} from "./sandboxErrors.js"

// One QuickJS runtime and context per projection, inside one WebAssembly instance shared by all sandboxes of
// the process. Nothing of the host is installed in the context: it has only ECMAScript's own built-ins, with
// string compilation, the clock and the random generator taken away or made deterministic (sandboxPrelude).
//
// The budget is counted, not timed: QuickJS calls the interrupt handler once every 10 000 polls (function
// calls and backward jumps), and an entry is stopped at the handler call that passes its budget. The count
// restarts at every entry (the script, then each item of a batch), so it depends on nothing but the code
// and the data, never on the machine or the host's load, and the simulator sees the same stops as a node.

export interface SandboxLimits {
  /** Bytes QuickJS may allocate for this projection (its objects, strings, bytecode). */
  readonly memoryBytes: number
  /** Bytes of native stack the interpreter may use: deep recursion stops with a RangeError-like error. */
  readonly stackBytes: number
  /** Interrupt-handler calls (each ~10 000 polls) the whole script may take. */
  readonly compileBudget: number
  /** Interrupt-handler calls each entry (each batch item) may take. */
  readonly executionBudget: number
}

export const defaultSandboxLimits: SandboxLimits = {
  memoryBytes: 64 * 1024 * 1024,
  // Each JavaScript frame takes ~190 bytes of this and more of the host's own stack: 256 KiB (~1 300 frames)
  // keeps QuickJS's own check well ahead of Node's stack limit.
  stackBytes: 256 * 1024,
  compileBudget: 2_000,
  executionBudget: 1_000
}

/** One batch: `items` is a JSON array; `now` and `seed` give, per item, what `Date` reads and `Math.random` starts from. */
export interface SandboxBatch {
  readonly items: string
  readonly now: ReadonlyArray<number>
  readonly seed: ReadonlyArray<number>
}

const STACK_LINES = 20

// A sandbox that broke (see `SandboxBroken`) retires the shared instance: the unwound interpreter may have left
// the instance's own stack pointer astray, so new sandboxes start in a fresh instance, while the live ones keep
// running in the old one until they are disposed.
let sharedModule: Promise<QuickJSWASMModule> | undefined
// The loaded module of each instance: a sandbox made once its instance is loaded is made synchronously, which a
// deterministic simulator needs (it runs its world without the event loop, where no promise settles).
const loadedModules = new WeakMap<Promise<QuickJSWASMModule>, QuickJSWASMModule>()
const currentModule = (): Promise<QuickJSWASMModule> => {
  if (sharedModule !== undefined) return sharedModule
  const loading = newQuickJSWASMModule(RELEASE_SYNC)
  sharedModule = loading
  void loading.then((module) => loadedModules.set(loading, module))
  return loading
}
const quickJs = Effect.promise(currentModule)

/**
 * Loads the WebAssembly module now, so sandboxes made later are made synchronously: for the simulator, which must
 * call it before its world runs; a live node loads it with its first sandbox.
 */
export const preloadSandbox = async (): Promise<void> => {
  const loading = currentModule()
  loadedModules.set(loading, await loading)
}

/** Bytes of the WebAssembly memory all sandboxes share (it grows and is reused, never returned). */
export const sandboxHeapBytes: Effect.Effect<number> = Effect.map(
  quickJs,
  // The module object is emscripten's; its heap view is the only measure of the linear memory.
  (module) => (module as unknown as { module: { HEAPU8: Uint8Array } }).module.HEAPU8.length
)

/** FNV-1a of the projection's name: where its `Math.random` starts. */
const seedOf = (name: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193)
  return h >>> 0
}

export class Sandbox {
  private ticks = 0
  private budget = 0
  private interrupted = false
  private item = -1
  private disposed = false
  private broken = false

  private constructor(
    readonly name: string,
    readonly limits: SandboxLimits,
    private readonly instance: Promise<QuickJSWASMModule>,
    private readonly runtime: QuickJSRuntime,
    private readonly vm: QuickJSContext,
    private readonly runner: QuickJSHandle,
    private readonly cursor: QuickJSHandle
  ) {}

  /** A fresh sandbox for the projection `name`, freed when the scope closes. */
  static make(name: string, limits: Partial<SandboxLimits> = {}): Effect.Effect<Sandbox, never, Scope.Scope> {
    return Effect.acquireRelease(
      Effect.suspend(() => {
        const instance = currentModule()
        const loaded = loadedModules.get(instance)
        const full = { ...defaultSandboxLimits, ...limits }
        if (loaded !== undefined) return Effect.sync(() => Sandbox.create(instance, loaded, name, full))
        return Effect.map(
          Effect.promise(() => instance),
          (module) => Sandbox.create(instance, module, name, full)
        )
      }),
      (sandbox) => Effect.sync(() => sandbox.dispose())
    )
  }

  private static create(
    instance: Promise<QuickJSWASMModule>,
    module: QuickJSWASMModule,
    name: string,
    limits: SandboxLimits
  ): Sandbox {
    const runtime = module.newRuntime()
    runtime.setMemoryLimit(limits.memoryBytes)
    runtime.setMaxStackSize(limits.stackBytes)
    const vm = runtime.newContext()
    const prelude = vm.unwrapResult(vm.evalCode(sandboxPrelude, "prelude.js"))
    const seed = vm.newNumber(seedOf(name))
    const exported = vm.unwrapResult(vm.callFunction(prelude, vm.undefined, seed))
    const runner = vm.getProp(exported, "runBatch")
    const cursor = vm.getProp(exported, "cursor")
    for (const handle of [exported, seed, prelude]) handle.dispose()
    const sandbox = new Sandbox(name, limits, instance, runtime, vm, runner, cursor)
    runtime.setInterruptHandler(() => sandbox.tick())
    return sandbox
  }

  /** The batch item the runner is on (-1 before the first, and while parsing the batch). */
  private currentItem(): number {
    const handle = this.vm.getProp(this.cursor, "item")
    const item = this.vm.getNumber(handle)
    handle.dispose()
    return item
  }

  // The interrupt handler: a tick that finds the runner on another item than the last tick did starts that
  // item's count afresh, so each item gets the whole budget without a crossing into the host per item.
  private tick(): boolean {
    const item = this.currentItem()
    if (item !== this.item) {
      this.item = item
      this.ticks = 0
    }
    if (++this.ticks <= this.budget) return false
    this.interrupted = true
    return true
  }

  private assertUsable(): void {
    assert(!this.disposed, `the sandbox of ${this.name} is used after it was disposed`)
    assert(!this.broken, `the sandbox of ${this.name} is used after it broke`)
  }

  private start(budget: number): void {
    this.assertUsable()
    this.ticks = 0
    this.budget = budget
    this.interrupted = false
    this.item = -1
  }

  /** Runs the projection's script at top level (the definition phase), under the compile budget. */
  compile(source: string): Effect.Effect<void, SandboxError> {
    return Effect.suspend(() => {
      this.start(this.limits.compileBudget)
      const result = this.guarded(
        () => 0,
        () => this.vm.evalCode(source, `${this.name}.js`)
      )
      if (result instanceof SandboxBroken) return Effect.fail(result)
      if (result.error !== undefined) return Effect.fail(this.failure(result.error, "compile", 0))
      result.value.dispose()
      return Effect.void
    })
  }

  /**
   * Calls the global function `functionName` once per item of the batch, in one crossing into the sandbox, and
   * returns the JSON array of its results. Each item is its own entry: a full budget, its own clock and seed.
   * The first item that fails stops the batch; the error names it.
   */
  runBatch(functionName: string, batch: SandboxBatch): Effect.Effect<string, SandboxError> {
    return Effect.suspend(() => {
      this.start(this.limits.executionBudget)
      const text = `{"items":${batch.items},"now":${JSON.stringify(batch.now)},"seed":${JSON.stringify(batch.seed)}}`
      const nameHandle = this.vm.newString(functionName)
      const batchHandle = this.vm.newString(text)
      const result = this.guarded(
        () => this.failedItem(),
        () => this.vm.callFunction(this.runner, this.vm.undefined, nameHandle, batchHandle)
      )
      if (result instanceof SandboxBroken) return Effect.fail(result)
      nameHandle.dispose()
      batchHandle.dispose()
      if (result.error !== undefined) return Effect.fail(this.failure(result.error, "execute", this.failedItem()))
      const json = this.vm.getString(result.value)
      result.value.dispose()
      return Effect.succeed(json)
    })
  }

  private failedItem(): number {
    return this.broken ? Math.max(0, this.item) : Math.max(0, this.currentItem())
  }

  /** Runs one crossing; a host exception out of the interpreter (its stack overflowed the host's) breaks it. */
  private guarded<A>(item: () => number, cross: () => A): A | SandboxBroken {
    try {
      return cross()
    } catch (cause) {
      this.broken = true
      if (sharedModule === this.instance) sharedModule = undefined
      return new SandboxBroken({
        item: item(),
        message: `The sandbox of projection ${this.name} stopped abnormally: ${String(cause)}`
      })
    }
  }

  private failure(error: QuickJSHandle, phase: "compile" | "execute", item: number): SandboxError {
    const dumped: unknown = this.vm.dump(error)
    error.dispose()
    const fields = typeof dumped === "object" && dumped !== null ? (dumped as Record<string, unknown>) : {}
    const errorName = typeof fields.name === "string" ? fields.name : "Error"
    const message = typeof fields.message === "string" ? fields.message : String(dumped)
    const stack = trimStack(typeof fields.stack === "string" ? fields.stack : "")
    if (this.interrupted) {
      const budget = phase === "compile" ? this.limits.compileBudget : this.limits.executionBudget
      return new SandboxTimeout({
        phase,
        budget,
        stack,
        item,
        message: `Projection script took too long to ${phase} (budget of ${budget} interrupt checks used up)`
      })
    }
    if (errorName === "InternalError" && message === "out of memory")
      return new SandboxOutOfMemory({
        limitBytes: this.limits.memoryBytes,
        item,
        message: `Projection ${this.name} went over its memory limit of ${this.limits.memoryBytes} bytes`
      })
    return new SandboxScriptError({ errorName, message, stack, item })
  }

  /** Bytes QuickJS holds for this projection (what the memory limit counts). */
  memoryUsedBytes(): Effect.Effect<number> {
    return Effect.sync(() => {
      this.assertUsable()
      const handle = this.runtime.computeMemoryUsage()
      const usage: unknown = this.vm.dump(handle)
      handle.dispose()
      const used = (usage as { memory_used_size?: unknown }).memory_used_size
      return typeof used === "number" ? used : 0
    })
  }

  /** Frees the context and the runtime; the sandbox cannot be used afterwards. */
  dispose(): void {
    if (this.disposed) return
    this.disposed = true
    // A broken interpreter's memory is in an unknown state: dropping it is all that is safe.
    if (this.broken) return
    this.runner.dispose()
    this.cursor.dispose()
    this.vm.dispose()
    this.runtime.dispose()
  }
}

/** A stack of a deep recursion is thousands of identical lines: keep the innermost ones. */
const trimStack = (stack: string): string => {
  const lines = stack.split("\n").filter((line) => line.length > 0)
  if (lines.length <= STACK_LINES) return lines.join("\n")
  return [...lines.slice(0, STACK_LINES), `    ... ${lines.length - STACK_LINES} more frames`].join("\n")
}
