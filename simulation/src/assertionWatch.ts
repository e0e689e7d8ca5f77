/**
 * A failed assertion inside the node is a crash of the node with its message (a broken invariant, never an
 * expected error). The watch sees every fiber of a node lifetime end: the first that ends with an
 * AssertionFailed defect fails the seed with that message, so the run stops at once and the seed is
 * printed, rather than the node hanging on a dead writer until a deadlock or a budget is reported.
 */
import { Effect, Exit, Supervisor, type Fiber } from "effect"
import { assertionFailureIn, type AssertionFailed } from "@vellum/platform"

export class AssertionWatch extends Supervisor.AbstractSupervisor<void> {
  readonly value = Effect.void

  constructor(private readonly onFailed: (error: AssertionFailed) => void) {
    super()
  }

  override onEnd<A, E>(exit: Exit.Exit<A, E>, _fiber: Fiber.RuntimeFiber<A, E>): void {
    if (Exit.isSuccess(exit)) return
    const broken = assertionFailureIn(exit.cause)
    if (broken !== undefined) this.onFailed(broken)
  }
}

/** The seed's failure for a failed assertion inside the node. */
export const assertionFailure = (error: AssertionFailed): string => `assertion failed in the node: ${error.message}`
