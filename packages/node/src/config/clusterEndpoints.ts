/**
 * The endpoints a cluster member is known by, from its options: where peers reach its internal interface
 * and where clients are sent when it leads, each with its advertised override, and the one spelling of a
 * peer's address ("host:port", IPv6 in brackets, host in lower case) that seeds are compared and handed on in.
 */
import { type Endpoint, peerAddressOf } from "@vellum/cluster"
import type { Config } from "./options.js"

/**
 * A seed in its one spelling: host in lower case (host names and hex digits ignore case), port without
 * leading zeros. The option's value type has already checked it is a `host:port`.
 */
export const normalisePeerAddress = (address: string): string => {
  const at = address.lastIndexOf(":")
  const host = address
    .slice(0, at)
    .replace(/^\[(.*)\]$/, "$1")
    .toLowerCase()
  return peerAddressOf({ host, port: Number(address.slice(at + 1)) })
}

/** 0.0.0.0 or ::, "every interface": fine to listen on, but nobody can be sent there. */
export const isUnspecifiedAddress = (host: string): boolean =>
  host === "0.0.0.0" || /^[0:]+$/.test(host.replace(/^\[(.*)\]$/, "$1"))

/** Where peers reach this node's internal interface. */
export const internalEndpointOf = (
  config: Pick<
    Config,
    "ReplicationIp" | "ReplicationPort" | "ReplicationHostAdvertiseAs" | "ReplicationTcpPortAdvertiseAs"
  >
): Endpoint => ({
  host: config.ReplicationHostAdvertiseAs !== "" ? config.ReplicationHostAdvertiseAs : config.ReplicationIp,
  port: config.ReplicationTcpPortAdvertiseAs > 0 ? config.ReplicationTcpPortAdvertiseAs : config.ReplicationPort
})

/** Where clients are sent when this node leads. */
export const httpAdvertisedOf = (
  config: Pick<Config, "NodeIp" | "NodePort" | "NodeHostAdvertiseAs" | "NodePortAdvertiseAs">
): Endpoint => ({
  host: config.NodeHostAdvertiseAs !== "" ? config.NodeHostAdvertiseAs : config.NodeIp,
  port: config.NodePortAdvertiseAs > 0 ? config.NodePortAdvertiseAs : config.NodePort
})
