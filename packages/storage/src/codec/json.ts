/**
 * Reading the JSON documents kept in events (stream metadata, `$settings`, users, scavenge history): each
 * counts only when it is one JSON object; anything else (not JSON, an array, null, a scalar) reads as absent.
 */

/** The UTF-8 text of event bytes, without copying them. */
export const utf8Text = (data: Uint8Array): string =>
  Buffer.from(data.buffer, data.byteOffset, data.length).toString("utf8")

/** The text as a JSON object, or undefined when it is not one. */
export const parseJsonObject = (text: string): Readonly<Record<string, unknown>> | undefined => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return undefined
  }
  return parsed === null || typeof parsed !== "object" || Array.isArray(parsed)
    ? undefined
    : (parsed as Record<string, unknown>)
}
