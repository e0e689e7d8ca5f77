import * as fs from "node:fs"
import * as path from "node:path"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { Disk } from "../src/Disk.js"
import * as NodeDisk from "../src/live/NodeDisk.js"
import { diskContract } from "./diskContract.js"
import { tempDirs } from "./tempDirs.js"

const tempDir = tempDirs("vellum-nodedisk-")

diskContract("NodeDisk", () => ({ disk: NodeDisk.make, root: tempDir() }))

describe("NodeDisk", () => {
  it("writes reach the real file and the layer provides the service", async () => {
    const root = tempDir()
    const file = path.join(root, "f")
    await Effect.runPromise(
      Effect.gen(function* () {
        const disk = yield* Disk
        const h = yield* disk.open(file, { create: true })
        yield* h.append(Buffer.from("hello"))
        yield* h.sync
        yield* disk.syncDir(root)
        yield* h.close
      }).pipe(Effect.provide(NodeDisk.layer))
    )
    expect(fs.readFileSync(file, "utf8")).toBe("hello")
  })

  it("maps errno codes to reasons, keeping code and path in the message", () => {
    const e = NodeDisk.toDiskError("open", "/x", Object.assign(new Error("boom"), { code: "ENOSPC" }))
    expect(e.reason).toBe("DiskFull")
    expect(e.message).toContain("ENOSPC")
    expect(e.message).toContain("/x")
    const cases: Array<[string, string]> = [
      ["ENOENT", "NotFound"],
      ["EEXIST", "AlreadyExists"],
      ["EDQUOT", "DiskFull"],
      ["EBADF", "Closed"],
      ["EINVAL", "InvalidArgument"],
      ["EIO", "IOError"],
      ["EACCES", "IOError"]
    ]
    for (const [code, reason] of cases) {
      expect(NodeDisk.toDiskError("write", "/p", Object.assign(new Error(code), { code })).reason).toBe(reason)
    }
  })

  it("append continues from the size the file had when opened", async () => {
    const root = tempDir()
    const file = path.join(root, "f")
    fs.writeFileSync(file, "12345")
    const pos = await Effect.runPromise(
      Effect.flatMap(NodeDisk.make.open(file), (h) => Effect.zipLeft(h.append(Buffer.from("6")), h.close))
    )
    expect(pos).toBe(5)
    expect(fs.readFileSync(file, "utf8")).toBe("123456")
  })
})
