/**
 * What a system projection asks to write. The engine adds its own stamp around `extraMetadata` (the
 * projection version and causing position first, `$causedBy`/`$correlationId` after), as for any
 * projection's emitted events; the entries here are raw JSON values, in the order they are written.
 */
export interface SystemWrite {
  readonly stream: string
  /** `$>` (a link) or `$@` (a stream reference). */
  readonly eventType: "$>" | "$@"
  /** UTF-8 text; never JSON. */
  readonly data: string
  readonly extraMetadata: ReadonlyArray<readonly [key: string, rawJson: string]>
}

/** The extra metadata alone as one JSON object, as the engine embeds it. */
export const extraMetadataJson = (write: SystemWrite): string =>
  `{${write.extraMetadata.map(([key, raw]) => `${JSON.stringify(key)}:${raw}`).join(",")}}`

export const link = (
  stream: string,
  target: string,
  extraMetadata: SystemWrite["extraMetadata"] = []
): SystemWrite => ({ stream, eventType: "$>", data: target, extraMetadata })
