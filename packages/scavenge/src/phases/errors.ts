import { Schema } from "effect"
import type { DiskError } from "@vellum/platform"
import type { StorageCorrupt } from "@vellum/storage"

/** A scavenge cannot go on: the run ends Errored with this message. */
export class ScavengeFailed extends Schema.TaggedError<ScavengeFailed>()("ScavengeFailed", {
  message: Schema.String
}) {}

/** A read of the log or the index failed. */
export type EngineReadError = StorageCorrupt | DiskError

/** The text of a failure for logs and history events: every tagged error carries a `message` (a defect may not). */
export const describeError = (e: unknown): string => {
  if (typeof e === "object" && e !== null) {
    const o = e as { readonly message?: unknown; readonly _tag?: unknown }
    if (typeof o.message === "string" && o.message !== "") return o.message
    if (typeof o._tag === "string") return o._tag
  }
  return String(e)
}
