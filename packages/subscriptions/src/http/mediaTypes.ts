/**
 * The media types of the `/subscriptions` routes, in the reference's order (the first of a list is the
 * route's default): the competing-consumer feed types for group reads and parked-message views, JSON and XML
 * for everything else.
 */

export const CompetingXml = "application/vnd.eventstore.competingatom+xml"
export const CompetingJson = "application/vnd.kurrent.competingatom+json"
export const LegacyCompetingJson = "application/vnd.eventstore.competingatom+json"

/** Group reads and parked-message views: `Accept: application/json` gets a 406 here, as upstream. */
export const CompetingCodecs: ReadonlyArray<string> = [CompetingXml, CompetingJson, LegacyCompetingJson]

/** Management, info documents and `restart`: requests and replies. */
export const DocumentCodecs: ReadonlyArray<string> = ["application/json", "text/xml"]

export const isXml = (responseType: string): boolean => responseType.toLowerCase().endsWith("xml")
