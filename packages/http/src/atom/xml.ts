/**
 * XML text helpers for the Atom XML forms, and JSON → XML conversion in the manner of Newtonsoft's
 * XmlNodeConverter, which the reference uses for `<content>`, `text/xml` event bodies and `event+xml`:
 * a property becomes an element, an array property repeats its element, `null`/`""`/`{}` give an empty
 * element, `@name` scalars become attributes (while the element's start tag is still open) and `#text`
 * becomes text. Names that are not XML names are encoded as XmlConvert.EncodeLocalName does (`_xHHHH_`).
 *
 * Characters XML 1.0 cannot carry (most C0 controls, lone surrogates) are replaced with U+FFFD so every
 * document stays well-formed; `\r` and, in attributes, tabs and newlines are written as character
 * references so they survive parsing.
 */
import { parseJson, type JsonEmitter } from "./jsonText.js"

// eslint-disable-next-line no-control-regex -- finding control characters is the point
const TEXT_SPECIAL = /[&<>\r\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const ATTR_SPECIAL = /[&<>"\t\n\r\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

const replacement = (c: string): string => {
  switch (c) {
    case "&": return "&amp;"
    case "<": return "&lt;"
    case ">": return "&gt;"
    case "\"": return "&quot;"
    case "\t": return "&#x9;"
    case "\n": return "&#xA;"
    case "\r": return "&#xD;"
    default: return "\uFFFD"
  }
}

export const escapeXmlText = (s: string): string => {
  TEXT_SPECIAL.lastIndex = 0
  return TEXT_SPECIAL.test(s) ? s.replace(TEXT_SPECIAL, replacement) : s
}

export const escapeXmlAttribute = (s: string): string => {
  ATTR_SPECIAL.lastIndex = 0
  return ATTR_SPECIAL.test(s) ? s.replace(ATTR_SPECIAL, replacement) : s
}

const SIMPLE_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/
const NAME_START = /[A-Za-z_\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02ff\u0370-\u037d\u037f-\u1fff\u2070-\u218f\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd]/
const NAME_CHAR = /[A-Za-z0-9_.\-\u00b7\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u037d\u037f-\u1fff\u203f\u2040\u2070-\u218f\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd]/

// Joiners are name characters too; kept out of the classes above (lint: joined sequences in a class).
const ZWNJ = "\u200c"
const ZWJ = "\u200d"

const hexEscape = (code: number): string => "_x" + code.toString(16).toUpperCase().padStart(4, "0") + "_"

/** An XML local name for a JSON property name (XmlConvert.EncodeLocalName rules). */
export const encodeXmlName = (name: string): string => {
  if (SIMPLE_NAME.test(name) && !name.includes("_x")) return name
  if (name.length === 0) return "_"
  let out = ""
  for (let i = 0; i < name.length; i++) {
    const c = name[i]!
    // A literal `_xHHHH_` would read back as an escape: its underscore is escaped.
    if (c === "_" && /^_x[0-9A-Fa-f]{4}_/.test(name.slice(i))) out += hexEscape(95)
    else if ((i === 0 ? NAME_START : NAME_CHAR).test(c) || c === ZWNJ || c === ZWJ) out += c
    else out += hexEscape(c.charCodeAt(0))
  }
  return out
}

/** One open JSON container while converting. */
interface Frame {
  readonly array: boolean
  /** Object frames: their element. Array frames: the element name every item repeats. */
  readonly name: string
  /** Object frames: the start tag has no `>` yet (attributes may still come). */
  open: boolean
  /** Array frames that opened a wrapper element (root or nested arrays) close it with this name. */
  readonly closeWith: string | undefined
  /** Object frames: attribute names written so far (a repeated one becomes an element instead). */
  attributeNames: Array<string> | undefined
}

class XmlFromJson implements JsonEmitter {
  out = ""
  private readonly frames: Array<Frame> = []
  private pending: string

  /**
   * @param rootName element name of the top value
   * @param topAttributes written on top-level elements (e.g. ` xmlns=""` under an Atom default namespace)
   * @param repeatRootArray a root array repeats `<rootName>` per item (the value is a property); otherwise it
   *   becomes `<rootName><item>…</item></rootName>` (the value is a whole document)
   */
  constructor(rootName: string, private readonly topAttributes: string, private readonly repeatRootArray: boolean) {
    this.pending = rootName
  }

  private parent(): Frame | undefined {
    return this.frames[this.frames.length - 1]
  }

  /** Attributes for the next element: the top-level ones for elements at the top. */
  private attributes(): string {
    const parent = this.parent()
    return parent === undefined || (parent.array && parent.closeWith === undefined && this.frames.length === 1) ? this.topAttributes : ""
  }

  /** The element name for the next value, closing the parent's start tag. */
  private elementName(): string {
    const parent = this.parent()
    if (parent === undefined) return this.pending
    if (parent.array) return parent.name
    if (parent.open) {
      this.out += ">"
      parent.open = false
    }
    return encodeXmlName(this.pending)
  }

  beginObject(): void {
    const attrs = this.attributes()
    const name = this.elementName()
    this.out += "<" + name + attrs
    this.frames.push({ array: false, name, open: true, closeWith: undefined, attributeNames: undefined })
  }

  name(key: string): void { this.pending = key }

  endObject(): void {
    const frame = this.frames.pop()!
    this.out += frame.open ? " />" : "</" + frame.name + ">"
  }

  beginArray(): void {
    const parent = this.parent()
    const attrs = this.attributes()
    const name = this.elementName()
    if ((parent !== undefined && !parent.array) || (parent === undefined && this.repeatRootArray)) {
      // An array property: its items repeat the property's element.
      this.frames.push({ array: true, name, open: false, closeWith: undefined, attributeNames: undefined })
      return
    }
    // A document-level array, or an array inside an array: a wrapper element around the items.
    this.out += "<" + name + attrs + ">"
    this.frames.push({ array: true, name: parent === undefined ? "item" : name, open: false, closeWith: name, attributeNames: undefined })
  }

  endArray(): void {
    const frame = this.frames.pop()!
    if (frame.closeWith !== undefined) this.out += "</" + frame.closeWith + ">"
  }

  string(value: string): void { this.scalar(value) }

  literal(text: string, kind: "number" | "boolean" | "null"): void { this.scalar(kind === "null" ? "" : text) }

  private scalar(text: string): void {
    const parent = this.parent()
    if (parent !== undefined && !parent.array) {
      if (this.pending.startsWith("@") && parent.open) {
        const attribute = encodeXmlName(this.pending.slice(1))
        // Namespace declarations are not data, and an attribute may appear once: those stay elements.
        if (!attribute.startsWith("xmlns") && parent.attributeNames?.includes(attribute) !== true) {
          (parent.attributeNames ??= []).push(attribute)
          this.out += " " + attribute + "=\"" + escapeXmlAttribute(text) + "\""
          return
        }
      }
      if (this.pending === "#text") {
        if (parent.open) {
          this.out += ">"
          parent.open = false
        }
        this.out += escapeXmlText(text)
        return
      }
    }
    const attrs = this.attributes()
    // Name first: it may close the parent's start tag, which must land before this element.
    const name = this.elementName()
    this.out += xmlElement(name, text, attrs)
  }
}

/**
 * JSON text as XML elements named `name`; undefined when the text is not JSON. See XmlFromJson for how a
 * root array is written.
 */
export const jsonToXml = (text: string, name: string, topAttributes = "", repeatRootArray = false): string | undefined => {
  const emitter = new XmlFromJson(name, topAttributes, repeatRootArray)
  return parseJson(text, emitter) ? emitter.out : undefined
}

/** A scalar as an element (`<name />` when empty). */
export const xmlElement = (name: string, text: string, attributes = ""): string =>
  text.length === 0 ? "<" + name + attributes + " />" : "<" + name + attributes + ">" + escapeXmlText(text) + "</" + name + ">"
