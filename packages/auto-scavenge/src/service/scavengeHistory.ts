/**
 * How a node scavenge ended, as its history stream recorded it: what the leader consults when the node no
 * longer knows (it restarted). The node's history writes reach the leader's log like any other write.
 */
import { Effect } from "effect"
import { HistoryEventTypes, runStreamOf } from "@vellum/scavenge"
import type { EventStoreService } from "@vellum/storage"
import type { NodeScavengeResult } from "../domain/events.js"

const LookBack = 20
const Recorded: ReadonlyArray<string> = ["Success", "Stopped", "Errored", "Interrupted"]

/** The result of the run's `$scavengeCompleted` among its last events, or undefined when there is none. */
export const recordedResult = (
  store: EventStoreService,
  scavengeId: string
): Effect.Effect<NodeScavengeResult | "Interrupted" | undefined> =>
  Effect.map(
    Effect.orElseSucceed(store.readStreamBackward(runStreamOf(scavengeId), -1, LookBack), () => undefined),
    (page) => {
      if (page === undefined || page._tag !== "Success") return undefined
      for (const resolved of page.events) {
        const e = resolved.event
        if (e === undefined || e.eventType !== HistoryEventTypes.Completed) continue
        try {
          const data = JSON.parse(e.data.toString("utf8")) as { scavengeId?: unknown; result?: unknown }
          if (data.scavengeId === scavengeId && typeof data.result === "string" && Recorded.includes(data.result))
            return data.result as NodeScavengeResult | "Interrupted"
        } catch {
          continue
        }
      }
      return undefined
    }
  )
