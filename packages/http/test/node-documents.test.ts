// The node documents: /ping in each codec, /info, /gossip in JSON, XML
// and text, and the .NET text formats and XML helpers they rely on.
import { describe, expect, it } from "vitest"
import { XMLParser, XMLValidator } from "fast-xml-parser"
import {
  clusterInfo,
  gossipBody,
  gossipReply,
  infoDocument,
  infoReply,
  pingReply,
  singleNodeIdentity,
  type GossipInput,
  type NodeIdentity
} from "../src/endpoints/index.js"
import { tryParseBoolean } from "../src/dotnetParse.js"
import { jsonDate, roundTripDate, shortDate, timeSpanGeneral } from "../src/endpoints/dotnet.js"
import { encodeXmlName, escapeXmlAttribute } from "../src/xmlText.js"

const parser = new XMLParser({ ignoreAttributes: false, parseTagValue: false })
const parseXml = (xml: string) => {
  expect(XMLValidator.validate(xml)).toBe(true)
  expect(xml.startsWith(`<?xml version="1.0" encoding="utf-8"?>`)).toBe(true)
  return parser.parse(xml) as Record<string, unknown>
}
const bodyText = (body: string | Uint8Array | undefined): string =>
  typeof body === "string" ? body : Buffer.from(body ?? []).toString("utf8")

const identity: NodeIdentity = singleNodeIdentity({
  version: "25.0.0",
  instanceId: "11111111-2222-4333-8444-555555555555",
  httpEndpoint: { host: "127.0.0.1", port: 2113 }
})

describe("/ping", () => {
  it("answers JSON {text} by default, labelled application/json; charset=utf-8", () => {
    const r = pingReply("application/json")
    expect(r.status).toBe(200)
    expect(r.headers["Content-Type"]).toBe("application/json; charset=utf-8")
    expect(JSON.parse(bodyText(r.body))).toEqual({ text: "Ping request successfully handled" })
    expect(bodyText(r.body)).toBe(`{\n  "text": "Ping request successfully handled"\n}`)
  })

  it("answers `Text: …` as text/plain", () => {
    const r = pingReply("text/plain")
    expect(r.headers["Content-Type"]).toBe("text/plain; charset=utf-8")
    expect(bodyText(r.body)).toBe("Text: Ping request successfully handled")
  })

  it.each(["text/xml", "application/xml"])("answers a well-formed TextMessage as %s", (type) => {
    const r = pingReply(type)
    expect(r.headers["Content-Type"]).toBe(`${type}; charset=utf-8`)
    const doc = parseXml(bodyText(r.body))
    expect((doc.TextMessage as Record<string, unknown>).Text).toBe("Ping request successfully handled")
  })
})

describe("/info", () => {
  it("has dbVersion, esVersion, lower-cased state, features and authentication", () => {
    const doc = infoDocument(identity, "Leader")
    expect(doc).toEqual({
      dbVersion: "25.0.0",
      esVersion: "25.0.0",
      state: "leader",
      features: { projections: false, userManagement: true, atomPub: true },
      authentication: { type: "internal", properties: [] }
    })
    expect(Object.keys(doc)).toEqual(["dbVersion", "esVersion", "state", "features", "authentication"])
    expect(infoDocument(identity, "ShuttingDown").state).toBe("shuttingdown")
    expect(infoDocument(identity, "PreReadOnlyReplica").state).toBe("prereadonlyreplica")
  })

  it("sends JSON whatever type was negotiated, labelled with the negotiated type", () => {
    for (const type of ["application/json", "text/xml", "application/xml", "text/plain"]) {
      const r = infoReply(type, identity, "Leader")
      expect(r.status).toBe(200)
      expect(r.headers["Content-Type"]).toBe(`${type}; charset=utf-8`)
      expect(JSON.parse(bodyText(r.body)).state).toBe("leader")
    }
  })
})

const gossipInput: GossipInput = {
  identity,
  state: "Leader",
  timeStampMillis: Date.UTC(2025, 2, 28, 16, 0, 0, 120),
  lastCommitPosition: 4096,
  writerCheckpoint: 4200,
  chaserCheckpoint: 4096,
  epoch: { position: 128, number: 3, id: "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee" }
}

const MemberFields = [
  "instanceId",
  "timeStamp",
  "state",
  "isAlive",
  "internalTcpIp",
  "internalTcpPort",
  "internalSecureTcpPort",
  "externalTcpIp",
  "externalTcpPort",
  "externalSecureTcpPort",
  "internalHttpEndPointIp",
  "internalHttpEndPointPort",
  "httpEndPointIp",
  "httpEndPointPort",
  "lastCommitPosition",
  "writerCheckpoint",
  "chaserCheckpoint",
  "epochPosition",
  "epochNumber",
  "epochId",
  "nodePriority",
  "isReadOnlyReplica",
  "esVersion"
]

describe("/gossip", () => {
  it("JSON: one member with exactly the spec's fields, in order, with their types", () => {
    const doc = JSON.parse(gossipBody("application/json", clusterInfo(gossipInput)))
    expect(Object.keys(doc)).toEqual(["members", "serverIp", "serverPort"])
    expect(doc.serverIp).toBe("127.0.0.1")
    expect(doc.serverPort).toBe(2113)
    expect(doc.members).toHaveLength(1)
    const m = doc.members[0]
    expect(Object.keys(m)).toEqual(MemberFields)
    expect(m).toMatchObject({
      instanceId: identity.instanceId,
      timeStamp: "2025-03-28T16:00:00.12Z",
      state: "Leader",
      isAlive: true,
      internalHttpEndPointIp: "127.0.0.1",
      internalHttpEndPointPort: 2113,
      httpEndPointIp: "127.0.0.1",
      httpEndPointPort: 2113,
      lastCommitPosition: 4096,
      writerCheckpoint: 4200,
      chaserCheckpoint: 4096,
      epochPosition: 128,
      epochNumber: 3,
      epochId: "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee",
      nodePriority: 0,
      isReadOnlyReplica: false,
      esVersion: "25.0.0"
    })
    for (const port of ["internalTcpPort", "internalSecureTcpPort", "externalTcpPort", "externalSecureTcpPort"])
      expect(m[port]).toBe(0)
  })

  it("advertises the advertise-as host and port to clients, keeps the internal endpoint", () => {
    const advertised = clusterInfo({
      ...gossipInput,
      identity: { ...identity, advertiseHost: "db.example.com", advertisePort: 443 }
    })
    const m = advertised.members[0]!
    expect([m.httpEndPointIp, m.httpEndPointPort, m.externalTcpIp]).toEqual(["db.example.com", 443, "db.example.com"])
    expect([m.internalHttpEndPointIp, m.internalHttpEndPointPort]).toEqual(["127.0.0.1", 2113])
  })

  it("XML: ClientClusterInfo with PascalCase members, well-formed", () => {
    const doc = parseXml(gossipBody("application/xml", clusterInfo(gossipInput)))
    const root = doc.ClientClusterInfo as Record<string, unknown>
    expect(root.ServerIp).toBe("127.0.0.1")
    expect(root.ServerPort).toBe("2113")
    const m = (root.Members as Record<string, Record<string, string>>).ClientMemberInfo!
    expect(m.InstanceId).toBe(identity.instanceId)
    expect(m.TimeStamp).toBe("2025-03-28T16:00:00.1200000Z")
    expect(m.State).toBe("Leader")
    expect(m.IsAlive).toBe("true")
    expect(m.EpochNumber).toBe("3")
    expect(m.ESVersion).toBe("25.0.0")
    expect(Object.keys(m).filter((k) => !k.startsWith("@_"))).toHaveLength(MemberFields.length)
  })

  it("text: the reference's ToString form", () => {
    const text = gossipBody("text/plain", clusterInfo(gossipInput))
    expect(
      text.startsWith("Server: 127.0.0.1:2113, Members: [InstanceId: {11111111-2222-4333-8444-555555555555}, ")
    ).toBe(true)
    expect(text).toContain("TimeStamp: 2025-03-28 16:00:00.120, State: Leader, IsAlive: True")
    expect(text).toContain("EpochId: {aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee}")
    expect(text.endsWith("IsReadOnlyReplica: False, DBVersion: $25.0.0]")).toBe(true)
  })

  it("is never cached", () => {
    const r = gossipReply("application/json", clusterInfo(gossipInput))
    expect(r.headers["Cache-Control"]).toBe("max-age=0, no-cache, must-revalidate")
    expect(r.headers.Vary).toBe("Accept")
    expect(r.headers["Content-Type"]).toBe("application/json; charset=utf-8")
  })
})

describe(".NET formats", () => {
  const t = Date.UTC(2017, 11, 15, 12, 19, 32, 21)
  it("dates", () => {
    expect(roundTripDate(t)).toBe("2017-12-15T12:19:32.0210000Z")
    expect(jsonDate(t)).toBe("2017-12-15T12:19:32.021Z")
    expect(jsonDate(Date.UTC(2017, 11, 15, 12, 19, 32, 0))).toBe("2017-12-15T12:19:32Z")
    expect(jsonDate(Date.UTC(2017, 11, 15, 12, 19, 32, 500))).toBe("2017-12-15T12:19:32.5Z")
    expect(shortDate(t)).toBe("2017-12-15 12:19:32.021")
  })
  it('TimeSpan "G"', () => {
    expect(timeSpanGeneral(0)).toBe("0:00:00:00.0000000")
    expect(timeSpanGeneral(1500)).toBe("0:00:00:01.5000000")
    expect(timeSpanGeneral(90_061_001)).toBe("1:01:01:01.0010000")
  })
  it("bool.TryParse", () => {
    expect([
      tryParseBoolean("true"),
      tryParseBoolean(" TRUE "),
      tryParseBoolean("False"),
      tryParseBoolean("1"),
      tryParseBoolean(""),
      tryParseBoolean(null)
    ]).toEqual([true, true, false, undefined, undefined, undefined])
  })
})

describe("XML helpers", () => {
  it("encodes names XML cannot carry, like XmlConvert.EncodeName", () => {
    expect(encodeXmlName("gen0Size")).toBe("gen0Size")
    expect(encodeXmlName("/")).toBe("_x002F_")
    expect(encodeXmlName("/data/db")).toBe("_x002F_data_x002F_db")
    expect(encodeXmlName("1m")).toBe("_x0031_m")
    expect(encodeXmlName("a:b c")).toBe("a_x003A_b_x0020_c")
    for (const name of ["/", "/data/db", "1m", "a:b c", "StorageWriterQueue", "é-ü"]) {
      expect(XMLValidator.validate(`<${encodeXmlName(name)}>x</${encodeXmlName(name)}>`)).toBe(true)
    }
  })
  it("escapes letters XML 1.0 does not allow in names", () => {
    expect(encodeXmlName("µs")).toBe("_x00B5_s")
  })
  it("escapes markup and replaces characters XML forbids", () => {
    expect(escapeXmlAttribute(`a<b & "c">`)).toBe("a&lt;b &amp; &quot;c&quot;&gt;")
    const text = escapeXmlAttribute("bell\u0007 ok")
    expect(XMLValidator.validate(`<a>${text}</a>`)).toBe(true)
    expect(text).toBe("bell\uFFFD ok")
  })
})
