/**
 * "Did you mean …?" for unknown option names: the closest option by edit distance over the normalized
 * names, when it is close enough to be a typo (the reference offers the same hint, with at most 5 edits).
 */
import type { Origin } from "./ConfigError.js"
import { cliKeyToPath, envKeyToPath, envNameOf, lookupKey } from "./naming.js"
import { optionSpecs, type OptionSpec, PRIMARY_ENV_PREFIX } from "./options.js"

const MAX_DISTANCE = 5

/** Short names need a tighter bound, or every three-letter typo "means" some unrelated option. */
const allowedDistance = (key: string): number => Math.min(MAX_DISTANCE, Math.floor(key.length / 3))

const editDistance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]!
}

const closest = (path: ReadonlyArray<string>): OptionSpec | undefined => {
  const key = lookupKey(path)
  let best: { spec: OptionSpec; distance: number } | undefined
  for (const spec of optionSpecs) {
    const distance = editDistance(key, lookupKey(spec.path))
    if (distance <= allowedDistance(key) && (best === undefined || distance < best.distance)) best = { spec, distance }
  }
  return best?.spec
}

/** The known name closest to an unknown one, spelled the way its source spells names; undefined if none is close. */
export const suggestFor = (origin: Origin): string | undefined => {
  switch (origin._tag) {
    case "Cli":
      return closest(cliKeyToPath(origin.flag.slice(2)))?.cliFlag
    case "Env": {
      const spec = closest(envKeyToPath(origin.variable.slice(PRIMARY_ENV_PREFIX.length)))
      return spec === undefined ? undefined : envNameOf(PRIMARY_ENV_PREFIX, spec.path)
    }
    case "Yaml":
      return closest(origin.key.split(":"))?.yamlKey
    case "Default":
      return undefined
  }
}
