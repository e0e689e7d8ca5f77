/**
 * The YAML config file: a mapping of option names (PascalCase as in the reference's `kurrentdb.conf`,
 * matched like every other source) to values; nested mappings for nested keys (`AutoScavenge: {Enabled:
 * false}`); a sequence only for list options (`GossipSeed`). The reference's leading `---` is allowed, not
 * required. Problems carry the file's line number.
 */
import { isMap, isScalar, isSeq, LineCounter, parseDocument } from "yaml"
import { type Origin, problem } from "./ConfigError.js"
import { findOption } from "./options.js"
import { SourceCollector, type SourceReading } from "./settings.js"

export const readYamlConfig = (content: string, file: string): SourceReading => {
  const collector = new SourceCollector("yaml")
  const lines = new LineCounter()
  const doc = parseDocument(content, { lineCounter: lines, uniqueKeys: true, prettyErrors: true })
  const firstError = doc.errors[0]
  if (firstError !== undefined) {
    const at = firstError.linePos?.[0]
    // The pretty message repeats the position and quotes the source; keep only the explanation.
    const explanation = firstError.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "")
    collector.addProblem(
      problem(
        undefined,
        undefined,
        `config file ${file} is not valid YAML${at === undefined ? "" : ` (line ${at.line}, column ${at.col})`}: ${explanation}`
      )
    )
    return collector.result()
  }
  const lineOf = (node: unknown): number | undefined =>
    isScalar(node) && node.range !== undefined && node.range !== null ? lines.linePos(node.range[0]).line : undefined

  const visit = (node: unknown, path: ReadonlyArray<string>): void => {
    if (!isMap(node)) {
      collector.addProblem(
        problem(
          undefined,
          undefined,
          `config file ${file} must be a mapping of option names to values${path.length === 0 ? "" : ` (at ${path.join(":")})`}`
        )
      )
      return
    }
    for (const pair of node.items) {
      const keyPath = [...path, String(isScalar(pair.key) ? pair.key.value : pair.key)]
      const origin: Origin = { _tag: "Yaml", file, key: keyPath.join(":"), line: lineOf(pair.key) }
      const found = findOption(keyPath)
      const value = pair.value
      if (found === undefined) {
        if (isMap(value))
          visit(value, keyPath) // a section: its keys are the options
        else collector.addUnknown(origin)
      } else if (isScalar(value)) {
        if (value.value === null || value.value === undefined)
          collector.addProblem(problem(found.spec.name, origin, "has no value"))
        else collector.add(found, String(value.value), origin)
      } else if (isSeq(value) && found.spec.kind === "list") {
        const items = value.items.map((item) => (isScalar(item) ? String(item.value) : undefined))
        if (items.some((item) => item === undefined)) {
          collector.addProblem(problem(found.spec.name, origin, "expected a list of plain values"))
        } else collector.add(found, items.join(","), origin)
      } else {
        collector.addProblem(
          problem(found.spec.name, origin, `expected a single value, got ${isSeq(value) ? "a list" : "a mapping"}`)
        )
      }
    }
  }

  if (doc.contents !== null) visit(doc.contents, [])
  return collector.result()
}
