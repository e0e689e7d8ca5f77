/**
 * PostgreSQL in `npm run bench:peers`: a private cluster of the Debian package's server (initdb into the run's
 * directory, 127.0.0.1 on a free port, no Unix socket), with its default durability: fsync,
 * synchronous_commit and full_page_writes on. The schema is the one message-db popularised: one table of
 * messages with a global position, the stream's name and position, type, data and metadata as jsonb and a
 * unique uuid. An append is one call of append_events (one round trip per batch), which takes an advisory
 * lock on the stream and checks the expected version before inserting.
 *
 * PostgreSQL will not run as root: as root, initdb and the server run as the package's `postgres` user.
 */
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import pg from "pg"
import { stopChild, waitUntil, type PeerServer } from "./peersServers.js"
import {
  GLOBAL_PAGE,
  SHARED_MEMORY_BYTES,
  benchEvents,
  fullPage,
  readStreamName,
  type PeerClient,
  type PeerTarget
} from "./peersPlan.js"

type PostgresTarget = Extract<PeerTarget, { peer: "postgres" }>

const SCHEMA = `
CREATE TABLE messages (
  global_position bigserial   PRIMARY KEY,
  stream_name     text        NOT NULL,
  position        bigint      NOT NULL,
  type            text        NOT NULL,
  data            jsonb       NOT NULL,
  metadata        jsonb,
  id              uuid        NOT NULL UNIQUE,
  time            timestamptz NOT NULL DEFAULT now(),
  UNIQUE (stream_name, position)
);

-- Appends a JSON array of events ({eventId, eventType, data, metadata}) to one stream and returns the
-- stream's new last position. p_expected: -2 any, -1 no stream yet, n the stream's last position.
CREATE FUNCTION append_events(p_stream text, p_expected bigint, p_events jsonb) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  v_last bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_stream, 0));
  SELECT coalesce(max(position), -1) INTO v_last FROM messages WHERE stream_name = p_stream;
  IF p_expected <> -2 AND p_expected <> v_last THEN
    RAISE EXCEPTION 'wrong expected version % for stream % at %', p_expected, p_stream, v_last;
  END IF;
  INSERT INTO messages (stream_name, position, type, data, metadata, id)
  SELECT p_stream, v_last + e.n, e.event->>'eventType', e.event->'data', e.event->'metadata', (e.event->>'eventId')::uuid
  FROM jsonb_array_elements(p_events) WITH ORDINALITY AS e(event, n);
  RETURN v_last + jsonb_array_length(p_events);
END $$;
`

const APPEND = "SELECT append_events($1, $2, $3) AS last"
const READ_STREAM =
  "SELECT global_position, position, id, type, data, metadata, time FROM messages " +
  "WHERE stream_name = $1 AND position >= $2 ORDER BY position LIMIT $3"
const READ_GLOBAL =
  "SELECT global_position, stream_name, position, id, type, data, metadata, time FROM messages " +
  "WHERE global_position >= $1 ORDER BY global_position LIMIT $2"

/** The newest installed server's bin directory (Debian's layout, or PG_BIN), undefined if there is none. */
export const postgresBinDir = (): string | undefined => {
  const fromEnv = process.env["PG_BIN"]
  if (fromEnv !== undefined) return fs.existsSync(path.join(fromEnv, "postgres")) ? fromEnv : undefined
  const root = "/usr/lib/postgresql"
  const versions = fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .filter((v) => /^\d+$/.test(v) && fs.existsSync(path.join(root, v, "bin", "postgres")))
        .sort((a, b) => Number(b) - Number(a))
    : []
  return versions.length === 0 ? undefined : path.join(root, versions[0]!, "bin")
}

/** As root: the ids of the package's `postgres` user, to run initdb and the server as. */
const serverUser = (): { uid: number; gid: number } | Record<string, never> => {
  if (process.getuid?.() !== 0) return {}
  const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }))
  return { uid: id("-u"), gid: id("-g") }
}

const config = (port: number): pg.ClientConfig => ({ host: "127.0.0.1", port, user: "postgres", database: "postgres" })

const connected = async (port: number) => {
  const client = new pg.Client(config(port))
  await client.connect()
  return client
}

export const startPostgres = async (binDir: string, dir: string, port: number): Promise<PeerServer> => {
  const user = serverUser()
  const dataDir = path.join(dir, "data")
  fs.mkdirSync(dataDir, { recursive: true })
  if ("uid" in user) fs.chownSync(dataDir, user.uid, user.gid)
  execFileSync(
    path.join(binDir, "initdb"),
    ["-D", dataDir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-instructions"],
    { ...user, stdio: "ignore" }
  )
  const log = fs.openSync(path.join(dir, "postgres.log"), "w")
  const settings = [
    "listen_addresses=127.0.0.1",
    "unix_socket_directories=",
    "fsync=on",
    "synchronous_commit=on",
    "full_page_writes=on",
    "max_connections=200",
    `shared_buffers=${SHARED_MEMORY_BYTES / (1024 * 1024)}MB`
  ]
  const child = spawn(
    path.join(binDir, "postgres"),
    ["-D", dataDir, "-p", String(port), ...settings.flatMap((s) => ["-c", s])],
    { ...user, cwd: dir, stdio: ["ignore", log, log] }
  )
  fs.closeSync(log)
  const server: PeerServer = {
    pid: child.pid!,
    // SIGINT is PostgreSQL's fast shutdown: the postmaster ends its backends, then itself.
    stop: () => stopChild(child, "SIGINT")
  }
  await waitUntil(child, "postgres", async () => (await connected(port)).end(), path.join(dir, "postgres.log"))
  const admin = await connected(port)
  try {
    await admin.query(SCHEMA)
  } finally {
    await admin.end()
  }
  return server
}

export const postgresVersion = async (port: number): Promise<string> => {
  const client = await connected(port)
  try {
    const { rows } = await client.query<{ server_version: string }>("SHOW server_version")
    return rows[0]!.server_version
  } finally {
    await client.end()
  }
}

/** Writes the read data, one append per stream, 8 connections; then ANALYZE. */
export const prefillPostgres = async (port: number, streams: number, eventsPerStream: number) => {
  const clients = await Promise.all(Array.from({ length: 8 }, () => connected(port)))
  let next = 0
  try {
    await Promise.all(
      clients.map(async (client) => {
        for (let k = next++; k < streams; k = next++)
          await client.query(APPEND, [readStreamName(k), -1, JSON.stringify(benchEvents(eventsPerStream))])
      })
    )
    await clients[0]!.query("ANALYZE messages")
  } finally {
    await Promise.all(clients.map((client) => client.end()))
  }
}

/**
 * One connection. Its appends carry the expected version of the stream (each client writes streams of its
 * own, so it knows them), so every append runs the check.
 */
export const connectPostgres = async (target: PostgresTarget): Promise<PeerClient> => {
  const client = await connected(target.port)
  const last = new Map<string, number>()
  return {
    append: async (stream, events) => {
      const { rows } = await client.query<{ last: string }>({
        name: "append",
        text: APPEND,
        values: [stream, last.get(stream) ?? -1, JSON.stringify(events)]
      })
      last.set(stream, Number(rows[0]!.last))
      return events.length
    },
    readStream: async (stream, from, count) => {
      const { rows } = await client.query({ name: "stream", text: READ_STREAM, values: [stream, from, count] })
      return fullPage(rows.length, count)
    },
    // The read data was written first, into an empty table: page p starts at global position 1 + p × page.
    readGlobal: async (page, count) => {
      const { rows } = await client.query({
        name: "global",
        text: READ_GLOBAL,
        values: [1 + page * GLOBAL_PAGE, count]
      })
      return fullPage(rows.length, count)
    },
    close: () => client.end()
  }
}
