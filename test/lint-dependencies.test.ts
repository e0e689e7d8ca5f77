// The dependency direction and the no-cycle rule are only worth something if the lint really refuses a
// wrong import. Each case plants a tiny workspace in a temporary folder (the same folder names, the
// workspace packages linked into node_modules as npm links them) and cruises it with the real config.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, relative, resolve } from "node:path"
import { cruise, type ICruiseResult } from "dependency-cruiser"
import { afterEach, describe, expect, it } from "vitest"
import config, { allowedDependencies, workspaceFolder } from "../dependency-cruiser.config.js"

const packages = ["platform", "storage", "http"]
const planted: Array<string> = []

const write = (root: string, path: string, text: string) => {
  mkdirSync(dirname(join(root, path)), { recursive: true })
  writeFileSync(join(root, path), text)
}

/** The rule names and edges dependency-cruiser refuses in a workspace made of `files`. */
const violations = async (files: Record<string, string>): Promise<Array<string>> => {
  const root = mkdtempSync(join(tmpdir(), "vellum-deps-"))
  planted.push(root)
  for (const name of packages) {
    write(
      root,
      `packages/${name}/package.json`,
      JSON.stringify({ name: `@vellum/${name}`, type: "module", exports: { ".": "./src/index.ts" } })
    )
    write(root, `packages/${name}/src/index.ts`, "export const here = 1\n")
    mkdirSync(join(root, "node_modules/@vellum"), { recursive: true })
    symlinkSync(join(root, `packages/${name}`), join(root, `node_modules/@vellum/${name}`))
  }
  write(root, "simulation/src/model.ts", "export const model = 1\n")
  for (const [path, text] of Object.entries(files)) write(root, path, text)
  const { output } = await cruise(["packages", "simulation"], {
    ...config.options,
    baseDir: root,
    validate: true,
    ruleSet: { forbidden: config.forbidden }
  })
  return (output as ICruiseResult).summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`)
}

afterEach(() => {
  for (const root of planted.splice(0)) rmSync(root, { recursive: true, force: true })
})

describe("dependency lint", () => {
  it("refuses storage importing http", async () => {
    expect(
      await violations({
        "packages/storage/src/leak.ts": 'import { here } from "@vellum/http"\nexport const x = here\n'
      })
    ).toEqual([
      "storage-imports-only-its-allowed-dependencies: packages/storage/src/leak.ts -> packages/http/src/index.ts"
    ])
  })

  it("refuses a package importing simulation/", async () => {
    expect(
      await violations({
        "packages/http/src/leak.ts":
          'import { model } from "../../../simulation/src/model.js"\nexport const x = model\n'
      })
    ).toEqual(["http-imports-only-its-allowed-dependencies: packages/http/src/leak.ts -> simulation/src/model.ts"])
  })

  it("refuses an import cycle inside a package, type-only imports included", async () => {
    const found = await violations({
      "packages/http/src/routes.ts":
        'import { handle } from "./handler.js"\nexport type Needs = string\nexport const routes = [handle]\n',
      "packages/http/src/handler.ts":
        'import type { Needs } from "./routes.js"\nexport const handle = (n: Needs) => n\n'
    })
    expect(found).toEqual([
      expect.stringMatching(
        /^no-import-cycle: packages\/http\/src\/(routes|handler)\.ts -> packages\/http\/src\/(handler|routes)\.ts$/
      )
    ])
  })

  it("refuses a cycle between packages", async () => {
    const found = await violations({
      "packages/platform/src/back.ts": 'import { x } from "../../storage/src/uses.js"\nexport const y = x\n',
      "packages/storage/src/uses.ts": 'import { y } from "../../platform/src/back.js"\nexport const x = () => y\n'
    })
    expect(found).toContainEqual(
      expect.stringMatching(
        /^no-import-cycle: packages\/(platform|storage)\/src\/\w+\.ts -> packages\/(storage|platform)\/src\/\w+\.ts$/
      )
    )
    expect(found).toContain(
      "platform-imports-only-its-allowed-dependencies: packages/platform/src/back.ts -> packages/storage/src/uses.ts"
    )
  })

  it("the table of allowed dependencies has no cycle, so following it never ties two packages together", () => {
    const table: Record<string, ReadonlyArray<string>> = allowedDependencies
    const reaches = (from: string, to: string, seen: Set<string>): boolean =>
      table[from]!.some((next) => next === to || (!seen.has(next) && (seen.add(next), reaches(next, to, seen))))
    for (const name of Object.keys(table)) expect(reaches(name, name, new Set()), name).toBe(false)
  })

  it("allows imports along the arrows", async () => {
    expect(
      await violations({
        "packages/storage/src/uses.ts": 'import { here } from "@vellum/platform"\nexport const x = here\n',
        "packages/http/src/uses.ts":
          'import { here } from "@vellum/storage"\nimport { here as p } from "@vellum/platform"\nexport const x = here + p\n',
        "simulation/src/run.ts": 'import { here } from "@vellum/http"\nexport const x = here\n'
      })
    ).toEqual([])
  })

  it("every workspace's package.json declares exactly the workspace packages its files import", () => {
    const folders = Object.keys(allowedDependencies).map((name) => [name, workspaceFolder(name)] as const)
    const owner = (path: string) => folders.find(([, folder]) => path === folder || path.startsWith(`${folder}/`))?.[0]
    const sources = (dir: string): Array<string> =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.name === "node_modules"
          ? []
          : entry.isDirectory()
            ? sources(join(dir, entry.name))
            : entry.name.endsWith(".ts")
              ? [join(dir, entry.name)]
              : []
      )
    for (const [name, folder] of folders) {
      const imported = new Set<string>()
      for (const file of sources(folder)) {
        for (const [, specifier] of readFileSync(file, "utf8").matchAll(/(?:from |import\()"([^"]+)"/g)) {
          const target = specifier!.startsWith("@vellum/")
            ? specifier!.split("/")[1]
            : specifier!.startsWith(".")
              ? owner(relative(process.cwd(), resolve(dirname(file), specifier!)))
              : undefined
          if (target !== undefined && target !== name) imported.add(`@vellum/${target}`)
        }
      }
      const manifest = JSON.parse(readFileSync(join(folder, "package.json"), "utf8")) as {
        dependencies?: Record<string, string>
      }
      const declared = Object.keys(manifest.dependencies ?? {}).filter((dep) => dep.startsWith("@vellum/"))
      expect(declared.sort(), folder).toEqual([...imported].sort())
    }
  })
})
