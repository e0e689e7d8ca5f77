/** `$streams`: each stream it is fed (metastreams of non-`$` streams too), once, linked at its event 0. */
import { noConfig, type SystemProjectionDefinition } from "./SystemProjection.js"
import { link } from "./SystemWrite.js"

export const StreamsFaults = {
  sourceGiven: "Cannot initialize categorize stream projection handler.  No source is allowed."
} as const

export const streams: SystemProjectionDefinition = {
  name: "$streams",
  defaultQuery: "",
  includeLinks: true,
  configure: noConfig(StreamsFaults.sourceGiven, (event) =>
    event.eventNumber === 0 ? [link("$streams", `0@${event.stream}`)] : []
  )
}
