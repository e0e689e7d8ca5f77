/**
 * `GET /ping`: the reference's TextMessage in the negotiated codec — JSON `{"text": …}`,
 * XML `<TextMessage><Text>…</Text></TextMessage>`, text `Text: …`. The reference's JSON also carries an
 * internal message `label` whose value depends on the deployment; it is left out (clients never rely on it).
 */
import { Effect } from "effect"
import type { Reply } from "../Reply.js"
import type { RouteDef } from "../Route.js"
import { documentReply, formatOf, indentedJson } from "./replies.js"
import { SERIALIZER_NAMESPACES, XML_DECLARATION, textElement, wrapElement } from "./xml.js"

export const PING_TEXT = "Ping request successfully handled"

/** The codecs of `/info`, `/info/options` and `/ping`, JSON first. */
export const InfoCodecs: ReadonlyArray<string> = ["application/json", "text/xml", "application/xml", "text/plain"]

/** A TextMessage body in the format of `responseType`. */
export const textMessageBody = (responseType: string, text: string): string => {
  switch (formatOf(responseType)) {
    case "xml":
      return XML_DECLARATION + wrapElement("TextMessage", textElement("Text", text), SERIALIZER_NAMESPACES)
    case "text":
      return `Text: ${text}`
    case "json":
      return indentedJson({ text })
  }
}

export const pingReply = (responseType: string): Reply =>
  documentReply(responseType, textMessageBody(responseType, PING_TEXT))

export const pingRoute: RouteDef = {
  method: "GET",
  path: "/ping",
  access: "anonymous",
  responseCodecs: InfoCodecs,
  handle: (input) => Effect.succeed(pingReply(input.responseType))
}
