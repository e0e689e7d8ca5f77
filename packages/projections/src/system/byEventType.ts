/**
 * `$by_event_type`: every non-link event linked into `$et-{eventType}`; a stream's deletion into
 * `$et-$deleted`, pointing into the deleted stream and marked `$deleted`. Its progress goes to `$et`.
 */
import { deletedStreamOf } from "./streamDeletion.js"
import { eventNumberText, isLink, pointerTo } from "./SystemEvent.js"
import { noConfig, type SystemProjectionDefinition } from "./SystemProjection.js"
import { link } from "./SystemWrite.js"

export const ByEventTypeFaults = { sourceGiven: "Empty source expected" } as const

export const byEventType: SystemProjectionDefinition = {
  name: "$by_event_type",
  defaultQuery: "",
  includeLinks: false,
  configure: noConfig(ByEventTypeFaults.sourceGiven, (event) => {
    if (isLink(event)) return []
    const deleted = deletedStreamOf(event)
    if (deleted === undefined) return [link(`$et-${event.eventType}`, pointerTo(event))]
    return [link("$et-$deleted", `${eventNumberText(event.eventNumber)}@${deleted}`, [["$deleted", "-1"]])]
  })
}

/** The checkpoint `$by_event_type` writes besides its projection checkpoint: the position, as JSON. */
export const byEventTypeCheckpoint = (positionJson: string) =>
  ({ stream: "$et", eventType: "$Checkpoint", data: positionJson, isJson: true }) as const
