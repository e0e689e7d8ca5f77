/**
 * The XML 1.0 text rules every XML document we write follows (Atom feeds and entries, event bodies as XML,
 * the node and admin documents): escaping text and attribute values, and turning any string into an
 * element or attribute name.
 *
 * Characters XML 1.0 cannot carry at all (C0 controls other than tab, LF and CR, U+FFFE/U+FFFF, lone
 * surrogates) are replaced with U+FFFD rather than refused: a stream name or a stats value must not make a
 * document unreadable. `\r` and, in attributes, tab and LF are written as character references so a parser
 * gives them back instead of normalising them away. Attributes are always written in double quotes, so `'`
 * needs no escaping anywhere and `"` only inside attributes.
 */

/** The declaration every document starts with (UTF-8, as the reference writes it). */
export const XML_DECLARATION = `<?xml version="1.0" encoding="utf-8"?>`

/* eslint-disable no-control-regex -- finding control characters is the point */
const TEXT_SPECIAL =
  /[&<>\r\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g
const ATTR_SPECIAL =
  /[&<>"\t\n\r\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g
/* eslint-enable no-control-regex */

const replacement = (c: string): string => {
  switch (c) {
    case "&":
      return "&amp;"
    case "<":
      return "&lt;"
    case ">":
      return "&gt;"
    case '"':
      return "&quot;"
    case "\t":
      return "&#x9;"
    case "\n":
      return "&#xA;"
    case "\r":
      return "&#xD;"
    default:
      return "\uFFFD"
  }
}

/** Element text: `& < >` and `\r` escaped, characters XML forbids replaced. */
export const escapeXmlText = (s: string): string => {
  TEXT_SPECIAL.lastIndex = 0
  return TEXT_SPECIAL.test(s) ? s.replace(TEXT_SPECIAL, replacement) : s
}

/** A double-quoted attribute value: as text, plus `"`, tab and LF. */
export const escapeXmlAttribute = (s: string): string => {
  ATTR_SPECIAL.lastIndex = 0
  return ATTR_SPECIAL.test(s) ? s.replace(ATTR_SPECIAL, replacement) : s
}

// XML 1.0 (fifth edition) NameStartChar and NameChar within the BMP; `:` is left out (names carry no prefix).
const SIMPLE_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/
const NAME_START =
  /[A-Za-z_\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02ff\u0370-\u037d\u037f-\u1fff\u2070-\u218f\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd]/
const NAME_CHAR =
  /[A-Za-z0-9_.\-\u00b7\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u037d\u037f-\u1fff\u203f\u2040\u2070-\u218f\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd]/

// Joiners are name characters too; kept out of the classes above (lint: joined sequences in a class).
const ZWNJ = "\u200c"
const ZWJ = "\u200d"

const ESCAPED_UNDERSCORE = /^_x[0-9A-Fa-f]{4}_/

/** `_xHHHH_`, or `_xHHHHHHHH_` for a code point past the BMP, as XmlConvert writes them. */
const hexEscape = (code: number): string =>
  "_x" +
  code
    .toString(16)
    .toUpperCase()
    .padStart(code > 0xffff ? 8 : 4, "0") +
  "_"

/**
 * A name for any string, as XmlConvert.EncodeLocalName makes it: valid names unchanged, every other character
 * as `_xHHHH_`. A literal `_xHHHH_` in the input would read back as an escape, so its underscore is escaped;
 * characters past the BMP are escaped whole, so the name is valid for every XML 1.0 parser.
 */
export const encodeXmlName = (name: string): string => {
  if (SIMPLE_NAME.test(name) && !name.includes("_x")) return name
  if (name.length === 0) return "_"
  let out = ""
  for (let i = 0; i < name.length;) {
    const code = name.codePointAt(i)!
    const c = name[i]!
    if (c === "_" && ESCAPED_UNDERSCORE.test(name.slice(i))) out += hexEscape(95)
    else if (code <= 0xffff && ((i === 0 ? NAME_START : NAME_CHAR).test(c) || c === ZWNJ || c === ZWJ)) out += c
    else out += hexEscape(code)
    i += code > 0xffff ? 2 : 1
  }
  return out
}
