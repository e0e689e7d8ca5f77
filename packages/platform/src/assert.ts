/**
 * Invariants in the code. `assert` states something that holds unless the code itself is wrong; when it
 * does not hold, carrying on would corrupt data silently, so the node stops with the message instead.
 * Assertions stay on in production and are cheap: callers pass a constant message (no string is built
 * unless the check fails), and nothing else is allocated on the passing path.
 */
import { Cause } from "effect"

/**
 * Called with every failed assertion as it is made, before it is thrown: the node's entry point stops the
 * process here (a fiber that dies of it in the background would otherwise leave a node that only hangs).
 * Unset in tests and the simulator, which see the defect itself.
 */
let onFailure: ((error: AssertionFailed) => void) | undefined

/** Sets what a failed assertion does before it is thrown (undefined: nothing); returns the previous handler. */
export const setAssertionFailedHandler = (handler: ((error: AssertionFailed) => void) | undefined) => {
  const previous = onFailure
  onFailure = handler
  return previous
}

/** A broken invariant: a defect of the code, never an expected error. Nothing catches it to carry on. */
export class AssertionFailed extends Error {
  constructor(message: string) {
    super(message)
    this.name = "AssertionFailed"
    onFailure?.(this)
  }
}

/** Throws AssertionFailed when `condition` is false. `message` says what should have held. */
export function assert(condition: boolean, message: string): asserts condition {
  if (!condition) throw new AssertionFailed(message)
}

/** Marks a branch the types prove unreachable (a switch over every case); reaching it anyway is a defect. */
export function unreachable(value: never): never {
  throw new AssertionFailed(`unreachable: ${String(value)}`)
}

/** True when `error` (or an Effect defect squashed from a cause) is a failed assertion. */
export const isAssertionFailed = (error: unknown): error is AssertionFailed => error instanceof AssertionFailed

/** The failed assertion among the defects of an Effect cause, if there is one. */
export const assertionFailureIn = (cause: Cause.Cause<unknown>): AssertionFailed | undefined => {
  for (const defect of Cause.defects(cause)) if (defect instanceof AssertionFailed) return defect
  return undefined
}
