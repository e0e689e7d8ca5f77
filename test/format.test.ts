// The formatter's rule fires: `npm test` runs `prettier --check .` with the repository's configuration, so a
// file written another way fails CI. This checks that configuration through Prettier's API, on a planted
// unformatted file and on its formatted form, and that the tree's own sources are checked (not ignored).
import { describe, expect, it } from "vitest"
import * as path from "node:path"
import * as prettier from "prettier"

const root = path.resolve(__dirname, "..")
const planted = path.join(root, "packages/storage/src/Planted.ts")

describe("the formatter", () => {
  it("refuses an unformatted file and accepts it once formatted", async () => {
    const options = { ...(await prettier.resolveConfig(planted)), filepath: planted }
    expect(options.printWidth).toBe(120)
    const unformatted = "export const planted = ( a:number ) => { return a+1; };\n"
    expect(await prettier.check(unformatted, options)).toBe(false)
    const formatted = await prettier.format(unformatted, options)
    expect(formatted).toBe("export const planted = (a: number) => {\n  return a + 1\n}\n")
    expect(await prettier.check(formatted, options)).toBe(true)
  })

  it("checks the sources: no package, test or script folder is ignored", async () => {
    for (const file of [
      "packages/storage/src/Planted.ts",
      "simulation/src/x.ts",
      "test/x.test.ts",
      "scripts/x.mjs",
      "bench/src/x.ts"
    ]) {
      const info = await prettier.getFileInfo(path.join(root, file), { ignorePath: path.join(root, ".prettierignore") })
      expect(info.ignored, file).toBe(false)
    }
  })
})
