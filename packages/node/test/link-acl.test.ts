// Links respect ACLs: a user who may not read a stream cannot read it through a `$>` link in a stream of
// their own. The composed node (real users, real `$acl`s, the default system-stream rules), in-process.
import { describe, expect, it } from "vitest"
import { admin, basic, text, withNode, type Call } from "./nodeAppSupport.js"

const mallory = basic("mallory", "pw")
const EventsJson = "application/vnd.eventstore.events+json"

let ids = 0
const eventId = () => `00000000-0000-4000-8000-${(++ids).toString().padStart(12, "0")}`

const append = async (call: Call, auth: string, stream: string, eventType: string, data: unknown) => {
  const reply = await call(
    "POST",
    `/streams/${encodeURIComponent(stream)}`,
    auth,
    { "content-type": EventsJson },
    JSON.stringify([{ eventId: eventId(), eventType, data }])
  )
  expect(reply.status, text(reply)).toBe(201)
}

/**
 * The node with users alice and mallory (no groups), a stream `secret` that only admins may read, and
 * mallory's own stream `mallory-links` holding links to `$user-alice` (0) and `secret` (1), plus a link to
 * a stream everyone may read (2).
 */
const withAttack = (body: (call: Call) => Promise<void>) =>
  withNode(async (call) => {
    for (const login of ["alice", "mallory"]) {
      const user = JSON.stringify({
        loginName: login,
        fullName: login,
        password: login === "alice" ? "alice-secret-pw" : "pw",
        groups: []
      })
      expect((await call("POST", "/users/", admin, { "content-type": "application/json" }, user)).status).toBe(201)
    }
    await append(call, admin, "secret", "pin", { pin: "4242-top-secret" })
    const acl = JSON.stringify({ $acl: { $r: "$admins", $mr: "$admins" } })
    expect(
      (
        await call(
          "POST",
          "/streams/secret/metadata",
          admin,
          { "content-type": "application/json", "es-eventid": eventId() },
          acl
        )
      ).status
    ).toBe(201)
    await append(call, admin, "public", "note", { note: "everyone may read this" })
    await append(call, mallory, "mallory-links", "$>", "0@$user-alice")
    await append(call, mallory, "mallory-links", "$>", "0@secret")
    await append(call, mallory, "mallory-links", "$>", "0@public")
    // The direct reads are refused, as they should be.
    expect((await call("GET", "/streams/$user-alice/0", mallory, { accept: "application/json" })).status).toBe(401)
    expect((await call("GET", "/streams/secret/0", mallory, { accept: "application/json" })).status).toBe(401)
    await body(call)
  })

/** What must never reach mallory: alice's hash record and the secret stream's data. */
const leaks = (body: string): ReadonlyArray<string> =>
  ["hash", "loginName", "4242-top-secret"].filter((s) => body.includes(s))

describe("links respect the reader's access to their targets", () => {
  it("stream pages (JSON every embed level, Atom XML, backward and forward) show denied links unresolved", async () => {
    await withAttack(async (call) => {
      const pages = [
        "/streams/mallory-links",
        "/streams/mallory-links/head/backward/20",
        "/streams/mallory-links/0/forward/20"
      ]
      const shapes: ReadonlyArray<Record<string, string>> = [
        { accept: "application/vnd.eventstore.atom+json" },
        { accept: "application/atom+xml" },
        { accept: "application/json" }
      ]
      for (const page of pages) {
        for (const embed of ["", "?embed=body", "?embed=pretty", "?embed=tryharder", "?embed=rich", "?embed=content"]) {
          for (const headers of shapes) {
            const reply = await call("GET", page + embed, mallory, headers)
            expect(reply.status, `${page}${embed} ${headers.accept}`).toBe(200)
            expect(leaks(text(reply)), `${page}${embed} ${headers.accept}`).toEqual([])
          }
        }
      }
      // The links still appear, as links (title and summary name the target), and the readable one resolves.
      const feed = JSON.parse(
        text(
          await call("GET", "/streams/mallory-links/0/forward/20?embed=body", mallory, { accept: "application/json" })
        )
      )
      // Forward pages list the newest entry first.
      expect(feed.entries.map((e: { title: string }) => e.title)).toEqual(["0@public", "0@secret", "0@$user-alice"])
      expect(feed.entries.map((e: { summary: string }) => e.summary)).toEqual(["$>", "$>", "$>"])
      expect(feed.entries[2].data).toBeUndefined()
      expect(feed.entries[1].data).toBeUndefined()
      expect(JSON.parse(feed.entries[0].data)).toEqual({ note: "everyone may read this" })
    })
  })

  it("single-event reads of a denied link answer as for a link whose target is gone (404), in every type", async () => {
    await withAttack(async (call) => {
      const types = [
        "application/json",
        "application/vnd.eventstore.atom+json",
        "application/atom+xml",
        "text/xml",
        "application/vnd.eventstore.event+json",
        "application/vnd.eventstore.event+xml",
        "application/octet-stream"
      ]
      for (const number of [0, 1]) {
        for (const accept of types) {
          for (const embed of ["", "?embed=body", "?embed=tryharder"]) {
            const reply = await call("GET", `/streams/mallory-links/${number}${embed}`, mallory, { accept })
            expect(reply.status, `${number} ${accept}${embed}`).toBe(404)
            expect(leaks(text(reply)), `${number} ${accept}${embed}`).toEqual([])
          }
        }
      }
      const readable = await call("GET", "/streams/mallory-links/2", mallory, { accept: "application/json" })
      expect(JSON.parse(text(readable))).toEqual({ note: "everyone may read this" })
      // ResolveLinkTos: false shows the link itself, as before.
      const plain = await call("GET", "/streams/mallory-links/0", mallory, {
        accept: "application/json",
        "es-resolvelinktos": "false"
      })
      expect(plain.status).toBe(200)
      expect(text(plain)).toBe('"0@$user-alice"')
    })
  })

  it("an admin still sees every link resolved", async () => {
    await withAttack(async (call) => {
      const feed = JSON.parse(
        text(await call("GET", "/streams/mallory-links/0/forward/20?embed=body", admin, { accept: "application/json" }))
      )
      expect(JSON.parse(feed.entries[2].data).loginName).toBe("alice")
      expect(JSON.parse(feed.entries[1].data)).toEqual({ pin: "4242-top-secret" })
      expect(
        JSON.parse(text(await call("GET", "/streams/mallory-links/1", admin, { accept: "application/json" })))
      ).toEqual({ pin: "4242-top-secret" })
    })
  })

  it("access granted later through `$acl` resolves the link on the next read (no stale answer)", async () => {
    await withAttack(async (call) => {
      expect((await call("GET", "/streams/mallory-links/1", mallory, { accept: "application/json" })).status).toBe(404)
      const acl = JSON.stringify({ $acl: { $r: ["$admins", "mallory"] } })
      expect(
        (
          await call(
            "POST",
            "/streams/secret/metadata",
            admin,
            { "content-type": "application/json", "es-eventid": eventId() },
            acl
          )
        ).status
      ).toBe(201)
      expect(
        JSON.parse(text(await call("GET", "/streams/mallory-links/1", mallory, { accept: "application/json" })))
      ).toEqual({ pin: "4242-top-secret" })
    })
  })

  it("`$all` reads that resolve links (ResolveLinkTos, filtered forward) apply the same check", async () => {
    await withAttack(async (call) => {
      // Mallory may read `$all` (granted by its metadata), but `$all` resolution still hides what she may not read.
      const acl = JSON.stringify({ $acl: { $r: ["$admins", "mallory"] } })
      expect(
        (
          await call(
            "POST",
            "/streams/$all/metadata",
            admin,
            { "content-type": "application/json", "es-eventid": eventId() },
            acl
          )
        ).status
      ).toBe(201)
      for (const url of [
        "/streams/$all?embed=body",
        "/streams/$all/00000000000000000000000000000000/forward/100?embed=body",
        "/streams/$all/filtered/00000000000000000000000000000000/forward/100?embed=body&context=streamid&type=prefix&data=mallory-"
      ]) {
        for (const [who, auth] of [
          ["mallory", mallory],
          ["admin", admin]
        ] as const) {
          const reply = await call("GET", url, auth, { accept: "application/json", "es-resolvelinktos": "true" })
          expect(reply.status, `${who} ${url}`).toBe(200)
          const feed = JSON.parse(text(reply))
          const byTitle = new Map(
            feed.entries.map((e: { title: string; data?: string; positionStreamId?: string }) => [
              `${e.title}|${e.positionStreamId ?? ""}`,
              e
            ])
          )
          const aliceLink = byTitle.get("0@$user-alice|mallory-links") as { data?: string } | undefined
          const secretLink = byTitle.get("0@secret|mallory-links") as { data?: string } | undefined
          const publicLink = byTitle.get("0@public|mallory-links") as { data?: string } | undefined
          expect(publicLink?.data, `${who} ${url}`).toBeDefined()
          if (who === "mallory") {
            expect(aliceLink?.data, `${who} ${url}`).toBeUndefined()
            expect(secretLink?.data, `${who} ${url}`).toBeUndefined()
          } else {
            expect(JSON.parse(aliceLink?.data ?? "{}").loginName, `${who} ${url}`).toBe("alice")
            expect(JSON.parse(secretLink?.data ?? "{}"), `${who} ${url}`).toEqual({ pin: "4242-top-secret" })
          }
        }
      }
    })
  })

  it("a long poll woken by a new link shows it unresolved to a reader who may not read its target", async () => {
    await withAttack(async (call) => {
      const poll = (auth: string) =>
        call("GET", "/streams/mallory-links/3/forward/20?embed=body", auth, {
          accept: "application/json",
          "es-longpoll": "10"
        })
      const asMallory = poll(mallory)
      const asAdmin = poll(admin)
      await append(call, mallory, "mallory-links", "$>", "0@secret")
      const [m, a] = await Promise.all([asMallory, asAdmin])
      expect(m.status).toBe(200)
      const malloryFeed = JSON.parse(text(m))
      expect(malloryFeed.entries.map((e: { title: string }) => e.title)).toEqual(["0@secret"])
      expect(malloryFeed.entries[0].data).toBeUndefined()
      expect(leaks(text(m))).toEqual([])
      expect(JSON.parse(JSON.parse(text(a)).entries[0].data)).toEqual({ pin: "4242-top-secret" })
    })
  })
})
