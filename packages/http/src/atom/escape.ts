/**
 * RFC 3986 "escape data string" (.NET Uri.EscapeDataString), the escaping ESDB applies to stream and group
 * names inside URLs. Only the unreserved characters `A–Z a–z 0–9 - _ . ~` stay literal;
 * unlike encodeURIComponent, `! * ' ( )` are escaped too.
 */

/** Characters that encodeURIComponent leaves alone but RFC 3986 data escaping does not. */
const EXTRA = /[!*'()]/g

const extraEscape = (c: string): string => "%" + c.charCodeAt(0).toString(16).toUpperCase()

/** A name made only of unreserved characters needs no work (the common case: skip the regexes). */
const UNRESERVED_ONLY = /^[A-Za-z0-9\-_.~]*$/

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

const encode = (s: string): string => {
  try {
    return encodeURIComponent(s)
  } catch {
    // encodeURIComponent rejects lone surrogates; UTF-8 encoding (as .NET does) writes U+FFFD for them.
    return encodeURIComponent(s.replace(LONE_SURROGATE, "\uFFFD"))
  }
}

export const escapeDataString = (s: string): string =>
  UNRESERVED_ONLY.test(s) ? s : encode(s).replace(EXTRA, extraEscape)
