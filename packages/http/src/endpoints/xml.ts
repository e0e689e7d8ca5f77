/**
 * The small XML writer the node documents need (ping, gossip, stats). The reference produces these with
 * .NET's XmlSerializer / XmlTextWriter: a UTF-8 declaration, no indentation, element names as written. Names
 * that are not valid XML (a drive path such as `/data` used as a stats key) are encoded by xmlText.ts, as for
 * every other document, so each stays well-formed.
 */
import { encodeXmlName, escapeXmlText } from "../xmlText.js"

export { XML_DECLARATION } from "../xmlText.js"

/** The namespace attributes XmlSerializer puts on the root of a serialized object. */
export const SERIALIZER_NAMESPACES = ` xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema"`

/** `<name>text</name>`, or `<name />` for an empty value (how XmlTextWriter closes an empty element). */
export const textElement = (name: string, text: string | undefined): string => {
  const tag = encodeXmlName(name)
  return text === undefined || text === "" ? `<${tag} />` : `<${tag}>${escapeXmlText(text)}</${tag}>`
}

/** `<name>inner</name>` around already-written XML. */
export const wrapElement = (name: string, inner: string, attributes = ""): string => {
  const tag = encodeXmlName(name)
  return inner === "" ? `<${tag}${attributes} />` : `<${tag}${attributes}>${inner}</${tag}>`
}
