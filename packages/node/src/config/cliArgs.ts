/**
 * The command line: `--name=value`, `--name value`, and for booleans also a bare `--name` (true) or
 * `--name true|false`. Names follow the reference's matching (any case, dashes optional, `:` for nested
 * keys: `--auto-scavenge:enabled=false`). `-h` is `--help`.
 */
import { problem } from "./ConfigError.js"
import { cliKeyToPath } from "./naming.js"
import { findOption } from "./options.js"
import { SourceCollector, type SourceReading } from "./settings.js"

const isFlag = (token: string | undefined): boolean => token !== undefined && token.startsWith("--")
const isBooleanWord = (token: string | undefined): boolean =>
  token !== undefined && /^(true|false)$/i.test(token.trim())

export const readCommandLine = (argv: ReadonlyArray<string>): SourceReading => {
  const collector = new SourceCollector("cli")
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!
    if (token === "-h") {
      collector.add(findOption(["Help"])!, "true", { _tag: "Cli", flag: token })
      continue
    }
    if (!isFlag(token) || token.length === 2) {
      collector.addProblem(
        problem(undefined, undefined, `unexpected argument ${JSON.stringify(token)} (options start with --)`)
      )
      continue
    }
    const equals = token.indexOf("=")
    const key = equals < 0 ? token.slice(2) : token.slice(2, equals)
    const inline = equals < 0 ? undefined : token.slice(equals + 1)
    const flag = `--${key}`
    const found = findOption(cliKeyToPath(key))
    const next = argv[i + 1]
    if (found === undefined) {
      // Its value, if it has one, must not be mistaken for an argument of its own.
      if (inline === undefined && next !== undefined && !isFlag(next)) i++
      collector.addUnknown({ _tag: "Cli", flag })
      continue
    }
    let raw: string
    if (inline !== undefined) raw = inline
    else if (found.spec.kind === "boolean") {
      if (isBooleanWord(next)) {
        raw = next!
        i++
      } else raw = "true"
    } else if (next !== undefined && !isFlag(next)) {
      raw = next
      i++
    } else {
      collector.addProblem(
        problem(found.spec.name, { _tag: "Cli", flag }, `needs a value (${flag}=${found.spec.placeholder})`)
      )
      continue
    }
    collector.add(found, raw, { _tag: "Cli", flag })
  }
  return collector.result()
}
