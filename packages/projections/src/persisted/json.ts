/** JSON reading shared by the codecs of this folder. */

/** A JSON text's value, or undefined when the text is no JSON. */
export const parseJson = (text: string): { readonly value: unknown } | undefined => {
  try {
    return { value: JSON.parse(text) as unknown }
  } catch {
    return undefined
  }
}

/** Whether a parsed value is a JSON object (not null, not an array). */
export const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A JSON text parsed as an object, or undefined. */
export const parseJsonObject = (text: string): Record<string, unknown> | undefined => {
  const parsed = parseJson(text)
  return parsed !== undefined && isJsonObject(parsed.value) ? parsed.value : undefined
}
