/**
 * `$by_category`: every event of a categorised stream, linked into `$ce-{category}`. A link is linked
 * to its own target (recategorised by the stream it lies in); a stream's deletion is linked into the
 * deleted stream's category, marked `$deleted`.
 */
import { Either } from "effect"
import { parseCategoryConfig } from "./category.js"
import { deletedStreamOf } from "./streamDeletion.js"
import { isLink, linkTargetOf, pointerTo } from "./SystemEvent.js"
import type { SystemProjectionDefinition } from "./SystemProjection.js"
import { link } from "./SystemWrite.js"

export const byCategory: SystemProjectionDefinition = {
  name: "$by_category",
  defaultQuery: "first\r\n-",
  includeLinks: true,
  configure: (query) =>
    Either.map(parseCategoryConfig(query), (categoryOf) => (event) => {
      const deleted = deletedStreamOf(event)
      const original = deleted ?? event.stream
      const category = categoryOf(original)
      if (category === undefined) return []
      const target = isLink(event) ? linkTargetOf(event) : pointerTo(event)
      const metadata: Array<readonly [string, string]> = [["$o", JSON.stringify(original)]]
      if (deleted !== undefined) metadata.push(["$deleted", "-1"])
      return [link(`$ce-${category}`, target, metadata)]
    })
}
