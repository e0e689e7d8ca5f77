/**
 * The services every stream handler needs: the store, and the ACL gate each operation passes first.
 * Its own module so the handlers and the route table that lists them both import it without importing
 * each other.
 */
import type { StreamAccess } from "@vellum/security"
import type { EventStore } from "@vellum/storage"

export type StreamRouteRequirements = EventStore | StreamAccess
