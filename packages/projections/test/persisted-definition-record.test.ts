import { describe, expect, it } from "vitest"
import {
  decodeDefinition,
  emptyDefinition,
  encodeDefinition,
  encodeDefinitionEvent,
  projectionCreatedEvent,
  projectionDeletedEvent,
  projectionIdOf,
  registryInitializedEvent,
  type DefinitionRecord
} from "../src/persisted/definitionRecord.js"

const created: DefinitionRecord = {
  ...emptyDefinition,
  handlerType: "JS",
  query: "fromAll().when({})",
  mode: "Continuous",
  enabled: true,
  sourceDefinition: { allStreams: true, allEvents: true, options: {} },
  emitEnabled: false,
  checkpointsDisabled: false,
  trackEmittedStreams: false,
  epoch: -1,
  version: 0,
  runAs: { name: "admin", roles: ["$admins", "$all"] },
  projectionSubsystemVersion: 4
}

describe("a projection's definition record", () => {
  it("is written indented, in the reference's member order, defaults of plain members left out", () => {
    expect(encodeDefinition(created)).toBe(
      [
        "{",
        '  "handlerType": "JS",',
        '  "query": "fromAll().when({})",',
        '  "mode": "Continuous",',
        '  "enabled": true,',
        '  "sourceDefinition": {',
        '    "allStreams": true,',
        '    "allEvents": true,',
        '    "options": {}',
        "  },",
        '  "emitEnabled": false,',
        '  "checkpointsDisabled": false,',
        '  "trackEmittedStreams": false,',
        '  "epoch": -1,',
        '  "version": 0,',
        '  "runAs": {',
        '    "name": "admin",',
        '    "roles": [',
        '      "$admins",',
        '      "$all"',
        "    ]",
        "  },",
        '  "checkpointHandledThreshold": 4000,',
        '  "checkpointUnhandledBytesThreshold": 10000000,',
        '  "pendingEventsThreshold": 5000,',
        '  "maxWriteBatchLength": 500,',
        '  "projectionSubsystemVersion": 4',
        "}"
      ].join("\n")
    )
  })

  it("leaves out a transient mode, false flags and zero thresholds, and writes the deletion flags when set", () => {
    const text = encodeDefinition({
      ...emptyDefinition,
      mode: "Transient",
      checkpointHandledThreshold: 0,
      maxWriteBatchLength: 0,
      deleting: true,
      deleteCheckpointStream: true,
      projectionExecutionTimeout: 500
    })
    expect(text).toBe(
      [
        "{",
        '  "deleting": true,',
        '  "deleteCheckpointStream": true,',
        '  "checkpointUnhandledBytesThreshold": 10000000,',
        '  "pendingEventsThreshold": 5000,',
        '  "projectionExecutionTimeout": 500',
        "}"
      ].join("\n")
    )
  })

  it("reads back what it wrote", () => {
    expect(decodeDefinition(encodeDefinition(created))).toEqual(created)
    const event = encodeDefinitionEvent(created)
    expect(event).toMatchObject({ eventType: "$ProjectionUpdated", isJson: true, metadata: "" })
  })

  it("reads leniently: any case, a mode by number, missing thresholds at their defaults, wrong types ignored", () => {
    const decoded = decodeDefinition(
      '{"HandlerType":"JS","MODE":1,"enabled":"yes","Epoch":3,"version":7,"runAs":{"Name":"ops"},"maxWriteBatchLength":"x"}'
    )
    expect(decoded).toEqual({
      ...emptyDefinition,
      handlerType: "JS",
      mode: "OneTime",
      epoch: 3,
      version: 7,
      runAs: { name: "ops", roles: [] }
    })
    expect(decodeDefinition('{"mode":"continuous"}')?.mode).toBe("Continuous")
    expect(decodeDefinition("not json")).toBeUndefined()
    expect(decodeDefinition("[1]")).toBeUndefined()
  })
})

describe("the projections registry", () => {
  it("records creation and deletion by the name as plain text", () => {
    expect(registryInitializedEvent).toEqual({
      eventType: "$ProjectionsInitialized",
      isJson: false,
      data: "",
      metadata: ""
    })
    expect(projectionCreatedEvent("orders")).toEqual({
      eventType: "$ProjectionCreated",
      isJson: false,
      data: "orders",
      metadata: ""
    })
    expect(projectionDeletedEvent("orders")).toMatchObject({ eventType: "$ProjectionDeleted", data: "orders" })
  })

  it("numbers a projection by its creation event, event 0 mapping to 2147483646", () => {
    expect(projectionIdOf(5)).toBe(5)
    expect(projectionIdOf(0)).toBe(2147483646)
  })
})
