/** `$stream_by_category`: each categorised stream, once (at its event 0), named in `$category-{category}`. */
import { Either } from "effect"
import { parseCategoryConfig } from "./category.js"
import type { SystemProjectionDefinition } from "./SystemProjection.js"

export const streamByCategory: SystemProjectionDefinition = {
  name: "$stream_by_category",
  defaultQuery: "first\r\n-",
  includeLinks: true,
  configure: (query) =>
    Either.map(parseCategoryConfig(query), (categoryOf) => (event) => {
      if (event.eventNumber !== 0) return []
      const category = categoryOf(event.stream)
      if (category === undefined) return []
      return [{ stream: `$category-${category}`, eventType: "$@", data: event.stream, extraMetadata: [] }]
    })
}
