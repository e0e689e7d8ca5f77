/**
 * The small XML writer the node documents need (ping, gossip, stats). The reference produces these with
 * .NET's XmlSerializer / XmlTextWriter: a UTF-8 declaration, no indentation, element names as written. Names
 * that are not valid XML (a drive path such as `/data` used as a stats key) are encoded the way
 * `XmlConvert.EncodeName` does it, so every document stays well-formed.
 */

export const XML_DECLARATION = `<?xml version="1.0" encoding="utf-8"?>`

/** The namespace attributes XmlSerializer puts on the root of a serialized object. */
export const SERIALIZER_NAMESPACES = ` xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema"`

// Characters XML 1.0 does not allow at all (not even as references): C0 controls except tab/LF/CR, U+FFFE/F,
// and unpaired surrogates. They are replaced rather than rejected: stats values are informational.
// eslint-disable-next-line no-control-regex
const INVALID_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/** Text content with `& < >` escaped (and `"` so the same text is safe in attributes). */
export const escapeText = (text: string): string =>
  text.replace(INVALID_CHARS, "\uFFFD").replace(/[&<>"]/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : "&quot;"))

const NAME_START = /[\p{L}_]/u
const NAME_REST = /[\p{L}\p{N}\p{Mn}\p{Mc}._-]/u

/** An element name: valid names unchanged, every other character as `_xHHHH_` (XmlConvert.EncodeName). */
export const encodeName = (name: string): string => {
  if (name === "") return "_"
  let out = ""
  let first = true
  for (const ch of name) {
    const ok = first ? NAME_START.test(ch) : NAME_REST.test(ch)
    if (ok) {
      out += ch
    } else {
      const code = ch.codePointAt(0)!
      out += `_x${code.toString(16).toUpperCase().padStart(code > 0xffff ? 8 : 4, "0")}_`
    }
    first = false
  }
  return out
}

/** `<name>text</name>`, or `<name />` for an empty value (how XmlTextWriter closes an empty element). */
export const textElement = (name: string, text: string | undefined): string => {
  const tag = encodeName(name)
  return text === undefined || text === "" ? `<${tag} />` : `<${tag}>${escapeText(text)}</${tag}>`
}

/** `<name>inner</name>` around already-written XML. */
export const wrapElement = (name: string, inner: string, attributes = ""): string => {
  const tag = encodeName(name)
  return inner === "" ? `<${tag}${attributes} />` : `<${tag}${attributes}>${inner}</${tag}>`
}
