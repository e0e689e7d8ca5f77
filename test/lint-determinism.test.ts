// The determinism rules are only worth something if the lint really rejects leaks in production
// code. This lints small snippets as if they lived in packages/storage and in a live layer.
import { ESLint } from "eslint"
import { describe, expect, it } from "vitest"

const eslint = new ESLint({ cwd: process.cwd() })

const lint = async (code: string, filePath: string) => {
  const [result] = await eslint.lintText(code, { filePath })
  return result!.messages.map((m) => m.message)
}

describe("determinism lint", () => {
  it("rejects Date.now() in packages/storage", async () => {
    const messages = await lint("export const t = Date.now()\n", "packages/storage/src/leak.ts")
    expect(messages.some((m) => m.includes("Date.now"))).toBe(true)
  })

  it.each([
    ["new Date()", "export const t = new Date()\n"],
    ["Math.random", "export const r = Math.random()\n"],
    ["setTimeout", "setTimeout(() => {}, 1)\n"],
    ["node:fs", 'import * as fs from "node:fs"\nexport const f = fs\n'],
    ["crypto.randomUUID", 'import { randomUUID } from "node:crypto"\nexport const u = randomUUID()\n'],
    ["process.env", "export const e = process.env\n"]
  ])("rejects %s in production code", async (_name, code) => {
    const messages = await lint(code, "packages/storage/src/leak.ts")
    expect(messages.length).toBeGreaterThan(0)
  })

  it("allows deterministic uses: new Date(ms) and hashing from node:crypto", async () => {
    const messages = await lint(
      'import { createHash } from "node:crypto"\nexport const d = new Date(0)\nexport const h = createHash("sha1")\n',
      "packages/storage/src/ok.ts"
    )
    expect(messages).toEqual([])
  })

  it.each([
    ["a *Live.ts file outside live/", "packages/scavenge/src/FooLive.ts"],
    ["a *Live*.ts file outside live/", "packages/http/src/node/NodeLiveStats.ts"],
    ["a main.ts other than the node's", "packages/http/src/main.ts"]
  ])("rejects Date.now() in %s: only live/ folders and the node's main.ts are exempt", async (_name, filePath) => {
    const messages = await lint("export const t = Date.now()\n", filePath)
    expect(messages.some((m) => m.includes("Date.now"))).toBe(true)
  })

  it("allows the real world inside live layers", async () => {
    const messages = await lint(
      'import * as fs from "node:fs"\nexport const t = Date.now() + fs.constants.O_RDONLY\n',
      "packages/platform/src/live/NodeDisk.ts"
    )
    expect(messages).toEqual([])
  })

  it("allows the real world in the node's main.ts, the composition root that starts the process", async () => {
    const messages = await lint(
      "export const t = Date.now() + (process.env.HOME === undefined ? 0 : 1)\n",
      "packages/node/src/main.ts"
    )
    expect(messages).toEqual([])
  })
})
