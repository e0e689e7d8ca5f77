/**
 * The stream description document: served with 406 (reason `Description Document`)
 * when a stream head or backward page is asked for without Accept or with `*\/*`, and with 200 when a
 * streamdesc type is asked for. The one document with relative hrefs.
 */
import { escapeDataString } from "./escape.js"
import { quoteJson } from "./jsonText.js"

export const DescriptionDocumentReason = "Description Document"

const StreamTypes = [
  "application/atom+xml",
  "application/vnd.kurrent.atom+json",
  "application/vnd.eventstore.atom+json"
]
const CompetingTypes = [
  "application/vnd.eventstore.competingatom+xml",
  "application/vnd.kurrent.competingatom+json",
  "application/vnd.eventstore.competingatom+json"
]

const I2 = "\n    "
const I3 = "\n      "
const I4 = "\n        "

/** A `{href, supportedContentTypes}` object whose members sit at `inner` and closing brace at `outer`. */
const linkObject = (href: string, types: ReadonlyArray<string>, outer: string, inner: string, item: string): string =>
  "{" +
  inner +
  '"href": ' +
  quoteJson(href) +
  "," +
  inner +
  '"supportedContentTypes": [' +
  types.map((t) => item + quoteJson(t)).join(",") +
  inner +
  "]" +
  outer +
  "}"

/**
 * @param contentType the negotiated streamdesc type (`self.supportedContentTypes` lists only it)
 * @param subscriptionGroups persistent-subscription groups on the stream; none (or empty) → `null`.
 *   Group names go into the href as they are (the reference does not escape them here).
 */
export const renderDescriptionDocument = (
  stream: string,
  contentType: string,
  subscriptionGroups?: ReadonlyArray<string>
): string => {
  const href = "/streams/" + escapeDataString(stream)
  const subscriptions =
    subscriptionGroups === undefined || subscriptionGroups.length === 0
      ? "null"
      : "[" +
        subscriptionGroups
          .map(
            (group) =>
              I3 +
              linkObject(
                "/subscriptions/" + escapeDataString(stream) + "/" + group,
                CompetingTypes,
                I3,
                I4,
                "\n          "
              )
          )
          .join(",") +
        I2 +
        "]"
  return (
    "{\n" +
    '  "title": ' +
    quoteJson(`Description document for '${stream}'`) +
    ",\n" +
    '  "description": "The description document will be presented when no accept header is present or it was requested",\n' +
    '  "_links": {' +
    I2 +
    '"self": ' +
    linkObject(href, [contentType], I2, I3, I4) +
    "," +
    I2 +
    '"stream": ' +
    linkObject(href, StreamTypes, I2, I3, I4) +
    "," +
    I2 +
    '"streamSubscription": ' +
    subscriptions +
    "\n  }\n}"
  )
}
