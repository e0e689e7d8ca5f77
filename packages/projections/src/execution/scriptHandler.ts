// The ProjectionHandler of a user projection: folds items in its sandbox, one crossing per batch. The sandbox keeps
// the live state between items of one partition; this side only checks the engine keeps its part of the contract
// (an item without a state continues the partition the previous item left live).
import { assert } from "@vellum/platform"
import { Effect } from "effect"
import type { HandlerFault, HandlerItem, HandlerOutcome, ProjectionHandler } from "../engine/ProjectionHandler.js"
import type { SourceDefinition } from "../language/SourceDefinition.js"
import type { Sandbox, SandboxBatch } from "../runtime/sandbox.js"
import type { SandboxError } from "../runtime/sandboxErrors.js"
import type { SourceItem } from "../sources/SourceReader.js"
import {
  clockOf,
  isItemFault,
  outcomeOf,
  partitionItemJson,
  processItemJson,
  seedOf,
  tooDeepReason
} from "./itemCodec.js"
import { timeoutMessage } from "./timeouts.js"

const STACK_LINES = 20
const TAMPERED = "The projection's runtime gave an unreadable outcome (its built-ins were tampered with)"

const fault = (index: number, message: string, stack: string, done: ReadonlyArray<HandlerOutcome>): HandlerFault => ({
  _tag: "HandlerFault",
  index,
  message,
  stack,
  done
})

/** A deep recursion's stack is thousands of lines alike: the innermost frames say enough (the sandbox cuts its own). */
const keepInnermost = (stack: string): string => {
  const lines = stack.split("\n").filter((line) => line !== "")
  return lines.length <= STACK_LINES
    ? lines.join("\n")
    : `${lines.slice(0, STACK_LINES).join("\n")}\n    ... ${lines.length - STACK_LINES} more frames`
}

const batchOf = (sources: ReadonlyArray<SourceItem>, items: ReadonlyArray<string>): SandboxBatch => ({
  items: `[${items.join(",")}]`,
  now: sources.map(clockOf),
  seed: sources.map(seedOf)
})

/** Items up to the first one too deeply nested for the sandbox, and that one's reason. */
const refusedAt = (sources: ReadonlyArray<SourceItem>): { readonly index: number; readonly reason?: string } => {
  for (let i = 0; i < sources.length; i++) {
    const reason = tooDeepReason(sources[i])
    if (reason !== undefined) return { index: i, reason }
  }
  return { index: sources.length }
}

interface Decoded {
  readonly done: ReadonlyArray<HandlerOutcome>
  readonly fault?: HandlerFault
}

export interface ScriptHandlerOptions {
  readonly executionTimeoutMillis: number
}

export const makeScriptHandler = (
  sandbox: Sandbox,
  definition: SourceDefinition,
  options: ScriptHandlerOptions
): ProjectionHandler => {
  const biState = definition.options.isBiState
  // The partition whose state the sandbox holds live, if any.
  let livePartition: string | undefined
  // The sandbox stopped abnormally (see SandboxBroken): it cannot be used again, every later call faults.
  let broken: string | undefined
  const refuseBroken = <A>(run: () => Effect.Effect<A, HandlerFault>): Effect.Effect<A, HandlerFault> =>
    Effect.suspend(() => (broken === undefined ? run() : Effect.fail(fault(0, broken, "", []))))

  /** What a stop the script could not catch left: the item it stopped at and the outcomes before it. */
  const stopped = (error: SandboxError): Effect.Effect<HandlerFault> => {
    livePartition = undefined
    const message =
      error._tag === "SandboxTimeout" ? timeoutMessage("execute", options.executionTimeoutMillis) : error.message
    const stack = error._tag === "SandboxTimeout" || error._tag === "SandboxScriptError" ? error.stack : ""
    // A broken sandbox cannot say what it had done: the whole batch counts as undone.
    if (error._tag === "SandboxBroken") {
      broken = `${message} (the projection must be loaded again)`
      return Effect.succeed(fault(0, message, stack, []))
    }
    return Effect.match(sandbox.runBatch("__projectionOutcomes", { items: "[null]", now: [0], seed: [0] }), {
      onFailure: () => fault(0, message, stack, []),
      onSuccess: (json) => {
        const [outcomes] = JSON.parse(json) as [Array<unknown>]
        const done: Array<HandlerOutcome> = []
        for (const value of outcomes.slice(0, error.item)) {
          const outcome = outcomeOf(value, biState)
          if (outcome === undefined) return fault(0, message, stack, [])
          done.push(outcome)
        }
        return fault(done.length, message, stack, done)
      }
    })
  }

  const decodeOutcomes = (json: string, count: number): Decoded => {
    const values = JSON.parse(json) as Array<unknown>
    const done: Array<HandlerOutcome> = []
    for (let i = 0; i < count; i++) {
      const value = values[i]
      if (isItemFault(value)) return { done, fault: fault(i, value.f, keepInnermost(value.s), done) }
      const outcome = outcomeOf(value, biState)
      if (outcome === undefined) return { done, fault: fault(i, TAMPERED, "", done) }
      done.push(outcome)
    }
    return { done }
  }

  const process = (items: ReadonlyArray<HandlerItem>): Effect.Effect<ReadonlyArray<HandlerOutcome>, HandlerFault> =>
    refuseBroken(() => {
      const sources = items.map((item) => item.source)
      const refused = refusedAt(sources)
      const runnable = items.slice(0, refused.index)
      const encoded: Array<string> = []
      let live = livePartition
      for (let i = 0; i < runnable.length; i++) {
        const item = runnable[i]
        assert(
          item.state !== undefined || item.partition === live,
          "an item without a state continues the partition the handler holds live"
        )
        assert(!biState || item.shared !== undefined || live !== undefined, "a bi-state item needs the shared state")
        live = item.partition
        encoded.push(processItemJson(item, i))
      }
      const run =
        runnable.length === 0
          ? Effect.succeed<Decoded>({ done: [] })
          : Effect.map(
              Effect.catchAll(
                sandbox.runBatch("__projectionProcess", batchOf(sources.slice(0, refused.index), encoded)),
                (error) => Effect.flatMap(stopped(error), Effect.fail)
              ),
              (json) => decodeOutcomes(json, runnable.length)
            )
      return Effect.flatMap(run, ({ done, fault: itemFault }) => {
        if (itemFault !== undefined) {
          livePartition = undefined
          return Effect.fail(itemFault)
        }
        livePartition = live
        if (refused.reason !== undefined) {
          livePartition = undefined
          return Effect.fail(fault(refused.index, refused.reason, "", done))
        }
        return Effect.succeed(done)
      })
    })

  const partitionsOf = (
    items: ReadonlyArray<SourceItem>
  ): Effect.Effect<ReadonlyArray<string | undefined>, HandlerFault> =>
    refuseBroken(() => {
      const refused = refusedAt(items)
      const runnable = items.slice(0, refused.index)
      const run =
        runnable.length === 0
          ? Effect.succeed("[]")
          : Effect.catchAll(
              sandbox.runBatch("__projectionPartition", batchOf(runnable, runnable.map(partitionItemJson))),
              (error) => Effect.flatMap(stopped(error), (f) => Effect.fail({ ...f, done: [] }))
            )
      return Effect.flatMap(run, (json) => {
        const values = JSON.parse(json) as Array<unknown>
        const keys: Array<string | undefined> = []
        for (let i = 0; i < runnable.length; i++) {
          const value = values[i]
          if (isItemFault(value)) {
            // The sandbox drops its live state on a fault.
            livePartition = undefined
            return Effect.fail(fault(i, value.f, keepInnermost(value.s), []))
          }
          if (!Array.isArray(value) || (value[0] !== null && typeof value[0] !== "string"))
            return Effect.fail(fault(i, TAMPERED, "", []))
          keys.push(value[0] === null ? undefined : (value[0] as string))
        }
        if (refused.reason !== undefined) return Effect.fail(fault(refused.index, refused.reason, "", []))
        return Effect.succeed(keys)
      })
    })

  return {
    partitionsOf,
    process,
    forgetLiveState: () => {
      livePartition = undefined
    },
    memoryBytes: () => (broken === undefined ? Effect.runSync(sandbox.memoryUsedBytes()) : 0)
  }
}
