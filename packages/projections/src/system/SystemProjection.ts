import { Either } from "effect"
import type { SystemEvent } from "./SystemEvent.js"
import type { SystemWrite } from "./SystemWrite.js"

/** One `$all` event in (only events `readsEvent(event, includeLinks)` accepts), its writes out. */
export type SystemProjectionHandler = (event: SystemEvent) => ReadonlyArray<SystemWrite>

export interface SystemProjectionDefinition {
  readonly name: string
  /** The query text it is created with. */
  readonly defaultQuery: string
  /** Whether it is fed `$all`'s links too. */
  readonly includeLinks: boolean
  /** The handler a query text configures, or the fault message of a query it refuses. */
  readonly configure: (query: string) => Either.Either<SystemProjectionHandler, string>
}

/** The config of a projection that takes none: only blank text, anything else faults with `fault`. */
export const noConfig =
  (fault: string, handler: SystemProjectionHandler) =>
  (query: string): Either.Either<SystemProjectionHandler, string> =>
    query.trim().length > 0 ? Either.left(fault) : Either.right(handler)
