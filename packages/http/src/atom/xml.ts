/**
 * JSON → XML conversion in the manner of Newtonsoft's
 * XmlNodeConverter, which the reference uses for `<content>`, `text/xml` event bodies and `event+xml`:
 * a property becomes an element, an array property repeats its element, `null`/`""`/`{}` give an empty
 * element, `@name` scalars become attributes (while the element's start tag is still open) and `#text`
 * becomes text. Names and text follow the XML rules of xmlText.ts.
 */
import { encodeXmlName, escapeXmlAttribute, escapeXmlText } from "../xmlText.js"
import { parseJson, type JsonEmitter } from "./jsonText.js"

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
  constructor(
    rootName: string,
    private readonly topAttributes: string,
    private readonly repeatRootArray: boolean
  ) {
    this.pending = rootName
  }

  private parent(): Frame | undefined {
    return this.frames[this.frames.length - 1]
  }

  /** Attributes for the next element: the top-level ones for elements at the top. */
  private attributes(): string {
    const parent = this.parent()
    return parent === undefined || (parent.array && parent.closeWith === undefined && this.frames.length === 1)
      ? this.topAttributes
      : ""
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

  name(key: string): void {
    this.pending = key
  }

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
    this.frames.push({
      array: true,
      name: parent === undefined ? "item" : name,
      open: false,
      closeWith: name,
      attributeNames: undefined
    })
  }

  endArray(): void {
    const frame = this.frames.pop()!
    if (frame.closeWith !== undefined) this.out += "</" + frame.closeWith + ">"
  }

  string(value: string): void {
    this.scalar(value)
  }

  literal(text: string, kind: "number" | "boolean" | "null"): void {
    this.scalar(kind === "null" ? "" : text)
  }

  private scalar(text: string): void {
    const parent = this.parent()
    if (parent !== undefined && !parent.array) {
      if (this.pending.startsWith("@") && parent.open) {
        const attribute = encodeXmlName(this.pending.slice(1))
        // Namespace declarations are not data, and an attribute may appear once: those stay elements.
        if (!attribute.startsWith("xmlns") && parent.attributeNames?.includes(attribute) !== true) {
          ;(parent.attributeNames ??= []).push(attribute)
          this.out += " " + attribute + '="' + escapeXmlAttribute(text) + '"'
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
export const jsonToXml = (
  text: string,
  name: string,
  topAttributes = "",
  repeatRootArray = false
): string | undefined => {
  const emitter = new XmlFromJson(name, topAttributes, repeatRootArray)
  return parseJson(text, emitter) ? emitter.out : undefined
}

/** A scalar as an element (`<name />` when empty). */
export const xmlElement = (name: string, text: string, attributes = ""): string =>
  text.length === 0
    ? "<" + name + attributes + " />"
    : "<" + name + attributes + ">" + escapeXmlText(text) + "</" + name + ">"
