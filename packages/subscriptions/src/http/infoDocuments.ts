/**
 * The info documents of groups, in the reference's member order: the summary of the lists
 * (`GET /subscriptions`, `GET /subscriptions/{s}`), the paged list, and a group's full `/info`. Positions are
 * written as text (an event number, or `C:{commit}/P:{prepare}` for a group on `$all`) with the legacy numeric
 * members parsed from them (0 when not a number). After the reference's members, `/info` carries Vellum's
 * health figures: when a message was last handed out and last acked, and how far the group lags its source.
 */
import { escapeDataString, formatAtomDate } from "@vellum/http"
import { renderGroupSettings } from "../config/renderGroupSettings.js"
import { AllStream } from "../persisted/groupDefinitions.js"
import { parkedStream } from "../persisted/streamNames.js"
import { positionTextOf } from "../service/groupStreams.js"
import type { GroupInfo } from "../service/Subscriptions.js"
import type { Document, XmlItemNames } from "./documents.js"

/** XML element names of array items, as the reference's classes name them. */
export const InfoXmlItems: XmlItemNames = {
  Links: "RelLink",
  Connections: "ConnectionInfo",
  ExtraStatistics: "Measurement",
  Subscriptions: "SubscriptionSummary",
  ArrayOfSubscriptionSummary: "SubscriptionSummary"
}

const positionText = (info: GroupInfo, position: number | undefined): string | null =>
  position === undefined ? null : positionTextOf(info.stream).write(position)

const legacyNumber = (text: string | null): number => (text !== null && /^-?\d+$/.test(text) ? Number(text) : 0)

const link = (href: string, rel: string): Document => ({ href, rel })

const urls = (baseUrl: string, info: GroupInfo) => {
  const stream = escapeDataString(info.stream)
  const group = escapeDataString(info.group)
  const base = `${baseUrl}/subscriptions/${stream}/${group}`
  return {
    detail: `${base}/info`,
    replayParked: `${base}/replayParked`,
    // The parked stream's name with the stream and group escaped in it, and its `$` too.
    parked: `${baseUrl}/streams/${escapeDataString("$")}${parkedStream(stream, group).slice(1)}`,
    messages: `${base}/1`
  }
}

const positions = (info: GroupInfo) => {
  const checkpointed = positionText(info, info.stats.lastCheckpoint)
  const known = positionText(info, info.stats.lastKnownPosition)
  return {
    lastProcessedEventNumber: legacyNumber(checkpointed),
    lastCheckpointedEventPosition: checkpointed,
    lastKnownEventNumber: legacyNumber(known),
    lastKnownEventPosition: known
  }
}

export const statusText = (info: GroupInfo): string => info.status.join(", ")

/** An item of the lists. */
export const summaryDocument = (baseUrl: string, info: GroupInfo): Document => {
  const u = urls(baseUrl, info)
  return {
    links: [link(u.detail, "detail")],
    eventStreamId: info.stream,
    groupName: info.group,
    parkedMessageUri: u.parked,
    getMessagesUri: u.messages,
    status: statusText(info),
    averageItemsPerSecond: info.averageItemsPerSecond,
    totalItemsProcessed: info.stats.totalItemsProcessed,
    ...positions(info),
    connectionCount: info.stats.connections.length,
    totalInFlightMessages: info.stats.outstandingMessagesCount
  }
}

const isoOrNull = (millis: number | undefined): string | null =>
  millis === undefined ? null : formatAtomDate(millis * 1000)

/** A group's `/info`. */
export const infoDocument = (baseUrl: string, info: GroupInfo): Document => {
  const u = urls(baseUrl, info)
  const { stats } = info
  const config = renderGroupSettings(info.settings)
  return {
    links: [link(u.detail, "detail"), link(u.replayParked, "replayParked")],
    config: {
      ...config,
      // A group on `$all` starts at a log position, kept as its text.
      startPosition:
        info.stream === AllStream ? (info.settings.startPosition ?? config.startPosition) : config.startPosition
    },
    eventStreamId: info.stream,
    groupName: info.group,
    status: statusText(info),
    averageItemsPerSecond: info.averageItemsPerSecond,
    parkedMessageUri: u.parked,
    getMessagesUri: u.messages,
    totalItemsProcessed: stats.totalItemsProcessed,
    countSinceLastMeasurement: info.countSinceLastMeasurement,
    ...positions(info),
    readBufferCount: stats.readBufferCount,
    liveBufferCount: stats.liveBufferCount,
    retryBufferCount: stats.retryBufferCount,
    totalInFlightMessages: stats.outstandingMessagesCount,
    outstandingMessagesCount: stats.outstandingMessagesCount,
    connections: stats.connections.map((c): Document => ({
      from: c.id,
      username: "",
      averageItemsPerSecond: 0,
      totalItemsProcessed: c.totalItemsProcessed,
      countSinceLastMeasurement: 0,
      extraStatistics: [],
      availableSlots: c.availableSlots,
      inFlightMessages: c.inFlight,
      connectionName: c.id
    })),
    parkedMessageCount: info.parkedMessageCount,
    // Vellum's health figures (not in the reference).
    lastDeliveryTime: isoOrNull(stats.lastDeliveryAt),
    lastAckTime: isoOrNull(stats.lastAckAt),
    lagEvents: info.lag.events,
    lagMilliseconds: info.lag.millis
  }
}

/** `?offset=&count=`: the page of the list, with its links. */
export const pagedDocument = (
  baseUrl: string,
  all: ReadonlyArray<GroupInfo>,
  offset: number,
  count: number
): Document => {
  const page = (from: number) => `${baseUrl}/subscriptions?offset=${from}&count=${count}`
  const links: Array<Document> = [link(page(offset), "self"), link(page(0), "first")]
  if (offset > 0) links.push(link(page(Math.max(0, offset - count)), "previous"))
  if (offset + count < all.length) links.push(link(page(offset + count), "next"))
  return {
    links,
    offset,
    count,
    total: all.length,
    subscriptions: all.slice(offset, offset + count).map((info) => summaryDocument(baseUrl, info))
  }
}
