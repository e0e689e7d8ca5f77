// Every option of the table is honoured or refused (src/config/optionSupport.ts), and the classification is
// checked against the code: an honoured option is read where the table says and shown by the test it names;
// a refused one stops the node with its reason. An option added without an entry does not compile, and one
// whose entry names a file that does not read it fails here.
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { formatConfigError, optionSpecs, optionSupport } from "../src/config/index.js"
import { fail, load } from "./configSupport.js"

const ROOT = fileURLToPath(new URL("../../../", import.meta.url))
const source = (path: string) => readFileSync(ROOT + path, "utf8")

/** The file's code without comments, so a mention in a comment does not count as a use. */
const codeOf = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "")

const honoured = optionSpecs.flatMap((spec) => {
  const support = optionSupport[spec.name]
  return support._tag === "Honoured" ? [[spec.name, spec, support] as const] : []
})
const refused = optionSpecs.flatMap((spec) => {
  const support = optionSupport[spec.name]
  return support._tag === "Refused" ? [[spec.name, spec, support] as const] : []
})

describe("the option support table", () => {
  it("classifies every option of the table, and nothing else", () => {
    expect(Object.keys(optionSupport).sort()).toEqual(optionSpecs.map((spec) => spec.name).sort())
  })

  it.each(honoured)("%s is read by the code the table names, outside the option table", (name, _spec, support) => {
    expect(support.readIn.length).toBeGreaterThan(0)
    for (const path of support.readIn) {
      expect(path).not.toMatch(/config\/(options|optionSupport|infoOptions|help)\.ts$/)
      expect(existsSync(ROOT + path), path).toBe(true)
      // A property read (`config.Name`) or, for the loader's own options, the name as a string literal.
      const read = new RegExp(`\\.${name}\\b|"${name}"`)
      expect(codeOf(source(path)), `${path} reads ${name}`).toMatch(read)
    }
  })

  it.each(honoured)("%s is exercised by the test the table names", (name, spec, support) => {
    expect(existsSync(ROOT + support.provedBy), support.provedBy).toBe(true)
    const text = source(support.provedBy)
    const mentions = [spec.cliFlag, spec.envName, name].some((word) => text.includes(word))
    expect(mentions, `${support.provedBy} mentions ${spec.cliFlag} or ${name}`).toBe(true)
  })

  it.each(refused)("%s: a value other than the default stops the node with the reason", (name, spec, support) => {
    expect(spec.decode(support.example)._tag, "the example is a valid value").toBe("Right")
    expect(spec.encode((spec.decode(support.example) as { right: unknown }).right)).not.toBe(spec.defaultText)
    const argv = spec.kind === "boolean" ? [`${spec.cliFlag}=${support.example}`] : [spec.cliFlag, support.example]
    const error = fail({ argv })
    expect(error.problems).toEqual([
      {
        option: name,
        origin: { _tag: "Cli", flag: spec.cliFlag },
        reason: `${spec.encode((spec.decode(support.example) as { right: unknown }).right)} is not supported: ${support.reason}`
      }
    ])
    expect(formatConfigError(error)).toContain(`${name} from command line ${spec.cliFlag}: `)
  })

  it.each(refused)("%s at its default (even set explicitly) starts the node", (name, spec) => {
    const loaded = load({ argv: [`${spec.cliFlag}=${spec.defaultText}`].filter(() => spec.defaultText !== "") })
    expect(spec.encode(loaded.config[name])).toBe(spec.defaultText)
  })

  it("refuses an option Vellum cannot honour, saying why", () => {
    expect(formatConfigError(fail({ argv: ["--fault-out-of-order-projections"] }))).toMatch(
      /FaultOutOfOrderProjections from command line --fault-out-of-order-projections: true is not supported: Vellum's projections read each stream in order/
    )
  })
})
