/**
 * A request body as a tree, the shape the HTTP layer's lenient JSON reader produces (numbers kept as their
 * literal text). Declared here, structurally the same, so this package reads bodies without depending on
 * the HTTP package: the HTTP layer parses the text (JSON, or XML turned into this shape) and hands the tree in.
 */
export type BodyTree =
  | { readonly kind: "object"; readonly members: ReadonlyArray<readonly [string, BodyTree]> }
  | { readonly kind: "array"; readonly items: ReadonlyArray<BodyTree> }
  | { readonly kind: "string"; readonly value: string }
  | { readonly kind: "number"; readonly text: string }
  | { readonly kind: "boolean"; readonly value: boolean }
  | { readonly kind: "null" }

/** The last member named `name` ignoring case (how .NET binds JSON properties to a class). */
export const memberIgnoringCase = (tree: BodyTree, name: string): BodyTree | undefined => {
  if (tree.kind !== "object") return undefined
  const lower = name.toLowerCase()
  let found: BodyTree | undefined
  for (const [key, value] of tree.members) if (key.toLowerCase() === lower) found = value
  return found
}

/** The last member named exactly `name` (XML element names are matched with case). */
export const memberExactly = (tree: BodyTree, name: string): BodyTree | undefined => {
  if (tree.kind !== "object") return undefined
  let found: BodyTree | undefined
  for (const [key, value] of tree.members) if (key === name) found = value
  return found
}
