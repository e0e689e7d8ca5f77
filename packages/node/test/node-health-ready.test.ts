// `/health/ready` on the composed node follows the store: 204 while writes are taken, 503 with the reason while a
// full disk refuses them (while `/health/live` stays 204), and 204 again once space is back and a write succeeds.
import { describe, expect, it } from "vitest"
import { MemoryDisk } from "@vellum/platform"
import { admin, withNode, type Call } from "./nodeSupport.js"

const appendOne = (call: Call, n: number) =>
  call({
    method: "POST",
    url: "/streams/s",
    headers: { host: "127.0.0.1:2113", authorization: admin, "content-type": "application/vnd.eventstore.events+json" },
    body: new TextEncoder().encode(
      JSON.stringify([
        {
          eventId: `fbf4a1a1-b4a3-4dfe-a01f-${n.toString(16).padStart(12, "0")}`,
          eventType: "t",
          data: { n, pad: "x".repeat(2000) }
        }
      ])
    )
  })
const health = async (call: Call, url: string) => {
  const reply = await call({ url, headers: { host: "127.0.0.1:2113" } })
  return `${reply.status} ${reply.reason ?? ""}`.trim()
}

describe("/health/ready on a node whose disk fills up", () => {
  it("503 Degraded while writes are refused, 204 before and after", async () => {
    const disk = new MemoryDisk()
    // Small chunks: the disk counts a chunk's whole size when it is created, so a full disk shows at the next one.
    await withNode(disk, ["--chunk-size", "131072", "--max-append-event-size", "32768"], async (call) => {
      expect((await appendOne(call, 1)).status).toBe(201)
      expect(await health(call, "/health/ready")).toBe("204 No Content")
      disk.capacityBytes = disk.totalBytes()
      let n = 2
      while ((await appendOne(call, n)).status === 201) {
        n++
        expect(n, "a 128 KiB chunk fills within 100 appends of 2 KB").toBeLessThan(100)
      }
      expect(await health(call, "/health/ready")).toBe(
        "503 Degraded: the disk is full: writes are refused until space is freed"
      )
      expect(await health(call, "/health/live")).toBe("204 No Content")
      disk.capacityBytes = undefined
      // The store retries its recovery on a backoff of at most 5 s; the first write after it is taken. 150 tries
      // 100 ms apart leave it 15 s however slow the machine is.
      for (let tries = 0; (await appendOne(call, ++n)).status !== 201; tries++) {
        expect(tries, "writes resume once space is back").toBeLessThan(150)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      expect(await health(call, "/health/ready")).toBe("204 No Content")
    })
  }, 30_000)
})
