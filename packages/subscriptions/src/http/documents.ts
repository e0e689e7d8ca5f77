/**
 * Plain documents (completions, info, lists) in the negotiated type: JSON indented by two spaces as the
 * reference's JSON codec writes it, or XML in the .NET XML serializer's shape (a root element named after
 * the document's class, members as PascalCase elements, arrays as one element per item named after the
 * item's class, null members left out).
 */
import { XML_DECLARATION, documentReply, encodeXmlName, escapeXmlText, type Reply } from "@vellum/http"
import { isXml } from "./mediaTypes.js"

export type Document = string | number | boolean | null | ReadonlyArray<Document> | { readonly [key: string]: Document }

/** For arrays in XML: the element name of each item, by the array member's name (root arrays: `root`). */
export type XmlItemNames = Readonly<Record<string, string>>

const pascal = (name: string): string => name.charAt(0).toUpperCase() + name.slice(1)

const SERIALIZER_NAMESPACES = ` xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema"`

const xmlValue = (name: string, value: Document, items: XmlItemNames, attributes = ""): string => {
  const tag = encodeXmlName(name)
  if (value === null) return ""
  if (Array.isArray(value)) {
    const itemName = items[name] ?? "Item"
    const inner = value.map((item) => xmlValue(itemName, item, items)).join("")
    return inner === "" ? `<${tag}${attributes} />` : `<${tag}${attributes}>${inner}</${tag}>`
  }
  if (typeof value === "object") {
    let inner = ""
    for (const [key, member] of Object.entries(value as Record<string, Document>)) {
      inner += xmlValue(pascal(key), member, items)
    }
    return inner === "" ? `<${tag}${attributes} />` : `<${tag}${attributes}>${inner}</${tag}>`
  }
  const text = String(value)
  return text === "" ? `<${tag}${attributes} />` : `<${tag}${attributes}>${escapeXmlText(text)}</${tag}>`
}

/** The document as text in the negotiated syntax; `root` names the XML root element. */
export const renderDocument = (
  responseType: string,
  root: string,
  value: Document,
  items: XmlItemNames = {}
): string =>
  isXml(responseType)
    ? XML_DECLARATION + xmlValue(root, value, items, SERIALIZER_NAMESPACES)
    : JSON.stringify(value, null, 2)

export const documentOf = (
  status: number,
  reason: string,
  responseType: string,
  root: string,
  value: Document,
  items: XmlItemNames = {},
  headers: Record<string, string> = {}
): Reply => documentReply(status, reason, responseType, renderDocument(responseType, root, value, items), headers)
