import { Data } from "effect"
import type { DiskError } from "@vellum/platform"
import type { StorageCorrupt } from "@vellum/storage"

/** A scavenge cannot go on: the run ends Errored with this reason. */
export class ScavengeFailed extends Data.TaggedError("ScavengeFailed")<{ readonly reason: string }> {}

/** A read of the log or the index failed. */
export type EngineReadError = StorageCorrupt | DiskError

/** The text of an error for logs and history events (tagged errors carry a message or a reason). */
export const describeError = (e: unknown): string => {
  if (typeof e === "object" && e !== null) {
    const o = e as { readonly message?: unknown; readonly reason?: unknown; readonly _tag?: unknown }
    if (typeof o.message === "string" && o.message !== "") return o.message
    if (typeof o.reason === "string" && o.reason !== "") return o.reason
    if (typeof o._tag === "string") return o._tag
  }
  return String(e)
}
