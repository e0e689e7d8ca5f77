// The operator-facing docs stay true: the README says how to change the port with the option's real names
// (taken from the option table) and links the user guide; no doc shows `docker run` while the repository
// has no Dockerfile to build the image it would run.
import { existsSync, readFileSync, readdirSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { optionSpecs } from "../packages/node/src/config/options.js"

const read = (path: string) => readFileSync(path, "utf8")
const docs = () => [
  "README.md",
  ...readdirSync("docs")
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`)
]

describe("docs for operators", () => {
  it("the README says how to change the port, in every source's spelling, and links the user guide", () => {
    const port = optionSpecs.find((s) => s.name === "NodePort")!
    const readme = read("README.md")
    for (const name of [port.cliFlag, port.envName, `${port.yamlKey}:`]) expect(readme, name).toContain(name)
    expect(readme).toContain("docs/user-guide.md")
    expect(existsSync("docs/user-guide.md")).toBe(true)
  })

  it("the user guide covers getting started, configuration, users and ACLs, scavenging, backup and monitoring", () => {
    const headings = read("docs/user-guide.md")
      .split("\n")
      .filter((l) => l.startsWith("## "))
      .join("\n")
      .toLowerCase()
    for (const topic of ["getting started", "configuration", "users", "scavenging", "backup", "monitoring"])
      expect(headings).toContain(topic)
  })

  it("no doc shows `docker run` unless the repository has a Dockerfile", () => {
    if (existsSync("Dockerfile")) return
    const offenders = docs().filter((path) => /docker\s+run/i.test(read(path)))
    expect(offenders).toEqual([])
  })
})
