/**
 * The `?embed=` levels of stream reads, ordered: each level includes what the
 * previous one shows. Only the lowercase-insensitive spellings `content`, `rich`, `body`, `pretty` and
 * `tryharder` select a level; anything else (even the documented `PrettyBody`/`None`) means None.
 */

export type EmbedLevel = "None" | "Content" | "Rich" | "Body" | "PrettyBody" | "TryHarder"

/** Numeric rank of each level, for "at least Body"-style comparisons. */
export const EmbedRank: Readonly<Record<EmbedLevel, number>> = {
  None: 0,
  Content: 1,
  Rich: 2,
  Body: 3,
  PrettyBody: 4,
  TryHarder: 5
}

export const parseEmbed = (value: string | null | undefined): EmbedLevel => {
  if (value === null || value === undefined) return "None"
  switch (value.toLowerCase()) {
    case "content":
      return "Content"
    case "rich":
      return "Rich"
    case "body":
      return "Body"
    case "pretty":
      return "PrettyBody"
    case "tryharder":
      return "TryHarder"
    default:
      return "None"
  }
}
