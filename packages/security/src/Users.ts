/**
 * Users: the user store of the node, kept AS EVENTS in the database like the reference server (layout in
 * UserRecord.ts), with an in-memory cache for authentication (UserCache.ts).
 *
 * Writes are serialized by one lock (user management is rare; this keeps read-modify-write simple) and use
 * the read event number as the expected version, so a concurrent direct write to a user stream is a
 * Conflict, never a lost update. Wrong credentials never tell whether the login exists: unknown logins,
 * wrong passwords and disabled users all fail the same way, after the same slow hash.
 */
import { Context, Duration, Effect, Layer, Random, Schedule, type Scope } from "effect"
import {
  DeletedStreamNumber,
  EventStore,
  ExpectedVersion,
  randomUuid,
  type AppendError,
  type EventStoreService,
  type ReadFailure
} from "@vellum/storage"
import { hashPassword, verifyPassword } from "./Password.js"
import { AuthenticationFailed, AuthenticationUnavailable, type Principal } from "./Principal.js"
import type { SecurityConfig } from "./SecurityConfig.js"
import { UserCache, type CacheEntry, type LoadedUser } from "./UserCache.js"
import { UserConflict, UserInvalidArgument, UserNotFound, UserStoreFailed, UserUnauthorized } from "./UserErrors.js"
import {
  decodeUser,
  encodeUser,
  invalidGroups,
  invalidLoginName,
  invalidPassword,
  loginOfStream,
  PasswordNotificationsStream,
  passwordNotificationsMetadata,
  principalOf,
  UserEventTypes,
  userStream,
  userStreamMetadata,
  UsersStream,
  type StoredUser,
  type UserDetails
} from "./UserRecord.js"

export interface NewUser {
  readonly loginName: string
  readonly fullName: string
  readonly groups: ReadonlyArray<string>
  readonly password: string
}

/** Fields an update sets; an absent field keeps its value. */
export interface UserChanges {
  readonly fullName?: string
  readonly groups?: ReadonlyArray<string>
}

type Change<E = never> = Effect.Effect<void, UserNotFound | UserConflict | UserInvalidArgument | UserStoreFailed | E>

export interface UsersService {
  /** Idempotent: an existing login with the same password succeeds unchanged; another password is a Conflict. */
  readonly create: (user: NewUser) => Effect.Effect<void, UserConflict | UserInvalidArgument | UserStoreFailed>
  readonly update: (loginName: string, changes: UserChanges) => Change
  /** Soft-deletes `$user-{login}`; the login can be created again. */
  readonly delete: (loginName: string) => Change
  readonly enable: (loginName: string) => Change
  readonly disable: (loginName: string) => Change
  /** Sets a password without knowing the old one (admins). */
  readonly resetPassword: (loginName: string, newPassword: string) => Change
  /** The user's own change: `currentPassword` must match, else Unauthorized. */
  readonly changePassword: (loginName: string, currentPassword: string, newPassword: string) => Change<UserUnauthorized>
  readonly get: (loginName: string) => Effect.Effect<UserDetails, UserNotFound | UserStoreFailed>
  /** Every user, sorted by login; NotFound when `$users` does not exist (as the reference). */
  readonly list: Effect.Effect<ReadonlyArray<UserDetails>, UserNotFound | UserStoreFailed>
  /** The user behind an authenticated principal; Unauthorized for anonymous. */
  readonly current: (
    principal: Principal
  ) => Effect.Effect<UserDetails, UserNotFound | UserUnauthorized | UserStoreFailed>
  /** Checks a login and password; one error for every kind of wrong credentials. */
  readonly authenticate: (
    loginName: string,
    password: string
  ) => Effect.Effect<Principal, AuthenticationFailed | AuthenticationUnavailable>
  /** The default users this start created (none when they existed already), for the start-up log. */
  readonly createdDefaultUsers: ReadonlyArray<string>
}

export class Users extends Context.Tag("@vellum/security/Users")<Users, UsersService>() {
  /** The Users layer (needs the EventStore; its cache listener lives as long as the layer). */
  static readonly layer = (config: SecurityConfig): Layer.Layer<Users, UserStoreFailed, EventStore> =>
    Layer.scoped(Users, makeUsers(config))
}

/** The standard users, created on first start (passwords from the configuration). */
export const defaultUsers = (config: SecurityConfig): ReadonlyArray<NewUser> => [
  {
    loginName: "admin",
    fullName: "KurrentDB Administrator",
    groups: ["$admins"],
    password: config.defaultAdminPassword
  },
  { loginName: "ops", fullName: "KurrentDB Operations", groups: ["$ops"], password: config.defaultOpsPassword }
]

const WrongCredentials = new AuthenticationFailed({ message: "Invalid login or password" })

const storeFailed = (e: AppendError | ReadFailure) =>
  e._tag === "StorageFailed" && e.reason !== undefined
    ? new UserStoreFailed({ message: e.message, writesRefused: e.reason, cause: e })
    : new UserStoreFailed({ message: e.message, cause: e })

const detailsOf = (loaded: Extract<LoadedUser, { _tag: "Found" }>): UserDetails => ({
  loginName: loaded.user.loginName,
  fullName: loaded.user.fullName,
  groups: loaded.user.groups,
  disabled: loaded.user.disabled,
  updatedMicros: loaded.updatedMicros
})

const check = (reason: string | undefined): Effect.Effect<void, UserInvalidArgument> =>
  reason === undefined ? Effect.void : Effect.fail(new UserInvalidArgument({ message: reason }))

/** Builds the service over an EventStore; creates the default users when missing. */
export const makeUsers = (
  config: SecurityConfig
): Effect.Effect<UsersService, UserStoreFailed, EventStore | Scope.Scope> =>
  Effect.gen(function* () {
    const store: EventStoreService = yield* EventStore
    const lock = yield* Effect.makeSemaphore(1)
    const serialized = lock.withPermits(1)
    const digestKey = Uint8Array.from(yield* Effect.replicateEffect(Random.nextIntBetween(0, 256), 32))
    const cache = new UserCache(Math.max(1, config.userCacheCapacity), digestKey)
    // Unknown logins are checked against this, so they cost what a real check costs.
    const decoyHash = yield* hashPassword("decoy password", config.passwordHash)

    // Writes that bypass this service (a direct write to `$user-x`, replication) drop the cached user too.
    yield* store.onCommit((notice) => {
      for (const stream of notice.streams) {
        const login = loginOfStream(stream)
        if (login !== undefined) cache.invalidate(login)
      }
    })

    const readUser = (loginName: string): Effect.Effect<LoadedUser, UserStoreFailed> =>
      Effect.flatMap(Effect.mapError(store.readStreamBackward(userStream(loginName), -1, 1), storeFailed), (read) => {
        if (read._tag !== "Success" || read.events.length === 0) {
          return Effect.succeed<LoadedUser>({ _tag: "Missing", hardDeleted: read._tag === "StreamDeleted" })
        }
        const event = read.events[0]!.event!
        const user = decodeUser(loginName, event.data)
        return Effect.succeed<LoadedUser>(
          user === undefined
            ? {
                _tag: "Unreadable",
                eventNumber: event.eventNumber,
                reason: `The data of user '${loginName}' (${event.stream}@${event.eventNumber}) is not a valid user`
              }
            : { _tag: "Found", user, eventNumber: event.eventNumber, updatedMicros: event.createdMicros }
        )
      })

    const lookup = (loginName: string): Effect.Effect<CacheEntry, UserStoreFailed> =>
      Effect.suspend(() => {
        const hit = cache.get(loginName)
        if (hit !== undefined) return Effect.succeed(hit)
        const generation = cache.begin()
        return Effect.map(readUser(loginName), (loaded) => cache.store(loginName, loaded, generation))
      })

    /** The user, NotFound when there is none, StoreFailed when its data is unreadable. */
    const usable = (
      loginName: string,
      loaded: LoadedUser
    ): Effect.Effect<Extract<LoadedUser, { _tag: "Found" }>, UserNotFound | UserStoreFailed> =>
      loaded._tag === "Found"
        ? Effect.succeed(loaded)
        : loaded._tag === "Missing"
          ? Effect.fail(new UserNotFound({ loginName }))
          : Effect.fail(new UserStoreFailed({ message: loaded.reason }))

    /** The principal when the entry's user is usable and `password` is the one verified for it before. */
    const alreadyVerified = (entry: CacheEntry, password: string): Principal | undefined => {
      const user = entry.loaded._tag === "Found" ? entry.loaded.user : undefined
      return user !== undefined && !user.disabled && cache.matchesVerified(entry, password)
        ? principalOf(user)
        : undefined
    }

    /** The slow way: the password against the stored hash; a match is remembered as the verified one. */
    const verifySlowly = (entry: CacheEntry, password: string): Effect.Effect<Principal, AuthenticationFailed> => {
      const user = entry.loaded._tag === "Found" ? entry.loaded.user : undefined
      // Every failure pays the slow hash (a decoy for unknown logins): the timing does not tell them apart.
      const ok = verifyPassword(password, user?.hash ?? decoyHash)
      if (user === undefined || user.disabled || !ok) return Effect.fail(WrongCredentials)
      entry.verified = cache.digest(password)
      return Effect.succeed(principalOf(user))
    }

    const found = (loginName: string) => Effect.flatMap(lookup(loginName), ({ loaded }) => usable(loginName, loaded))

    const appended =
      (loginName: string) =>
      (e: AppendError): UserConflict | UserStoreFailed =>
        e._tag === "WrongExpectedVersion"
          ? new UserConflict({ loginName, message: `User '${loginName}' was changed concurrently; try again` })
          : e._tag === "StreamDeleted"
            ? new UserConflict({ loginName, message: `The stream of user '${loginName}' is hard-deleted` })
            : storeFailed(e)

    const appendEvent = (
      stream: string,
      expectedVersion: number,
      eventType: string,
      data: Uint8Array,
      isJson: boolean
    ) =>
      Effect.flatMap(randomUuid, (eventId) =>
        store.append(stream, expectedVersion, [{ eventId, eventType, isJson, data, metadata: new Uint8Array(0) }])
      )

    const writeUser = (user: StoredUser, eventType: string, expectedVersion: number) =>
      Effect.mapError(
        appendEvent(userStream(user.loginName), expectedVersion, eventType, encodeUser(user), true),
        appended(user.loginName)
      )

    /** `$PasswordChanged`: sessions elsewhere must check the credentials again. */
    const announce = (loginName: string) =>
      Effect.gen(function* () {
        const meta = yield* store.getStreamMetadata(PasswordNotificationsStream)
        if (meta.metaLastEventNumber < 0)
          yield* store.setStreamMetadata(
            PasswordNotificationsStream,
            ExpectedVersion.Any,
            passwordNotificationsMetadata()
          )
        yield* appendEvent(
          PasswordNotificationsStream,
          ExpectedVersion.Any,
          UserEventTypes.PasswordChanged,
          Buffer.from(JSON.stringify({ loginName })),
          true
        )
      }).pipe(Effect.mapError((e: AppendError | ReadFailure) => storeFailed(e)))

    /** Read, change and write back one user under the lock; the cache entry is dropped afterwards. */
    const change = <E>(
      loginName: string,
      announceChange: boolean,
      apply: (user: StoredUser) => Effect.Effect<StoredUser, E>
    ) =>
      serialized(
        Effect.gen(function* () {
          const loaded = yield* Effect.flatMap(readUser(loginName), (l) => usable(loginName, l))
          const updated = yield* apply(loaded.user)
          if (announceChange) yield* announce(loginName)
          yield* writeUser(updated, UserEventTypes.Updated, loaded.eventNumber)
        }).pipe(Effect.ensuring(Effect.sync(() => cache.invalidate(loginName))))
      )

    const create = (user: NewUser) =>
      Effect.gen(function* () {
        yield* check(invalidLoginName(user.loginName) ?? invalidPassword(user.password) ?? invalidGroups(user.groups))
        yield* serialized(
          Effect.gen(function* () {
            const loaded = yield* readUser(user.loginName)
            if (loaded._tag !== "Missing") {
              if (loaded._tag === "Found" && verifyPassword(user.password, loaded.user.hash)) return
              return yield* Effect.fail(
                new UserConflict({ loginName: user.loginName, message: `User '${user.loginName}' already exists` })
              )
            }
            const stream = userStream(user.loginName)
            const last = yield* Effect.mapError(store.lastEventNumber(stream), storeFailed)
            if (loaded.hardDeleted || last === DeletedStreamNumber) {
              return yield* Effect.fail(
                new UserConflict({
                  loginName: user.loginName,
                  message: `The stream of user '${user.loginName}' is hard-deleted; the login cannot be used again`
                })
              )
            }
            const hash = yield* hashPassword(user.password, config.passwordHash)
            // The ACL first, so the user's data is never writable by others. On a soft-deleted stream this JSON
            // metadata also recreates it (`$tb` = last + 1: the old user's events stay hidden).
            yield* Effect.mapError(
              store.setStreamMetadata(stream, ExpectedVersion.Any, userStreamMetadata()),
              appended(user.loginName)
            )
            yield* writeUser(
              { loginName: user.loginName, fullName: user.fullName, groups: user.groups, disabled: false, hash },
              UserEventTypes.Created,
              last
            )
            yield* Effect.mapError(
              appendEvent(
                UsersStream,
                ExpectedVersion.Any,
                UserEventTypes.User,
                Buffer.from(user.loginName, "utf8"),
                false
              ),
              storeFailed
            )
          }).pipe(Effect.ensuring(Effect.sync(() => cache.invalidate(user.loginName))))
        )
      })

    const listLogins = Effect.gen(function* () {
      const logins = new Set<string>()
      for (let from = 0; ;) {
        const read = yield* Effect.mapError(
          store.readStreamForward(UsersStream, from, store.config.maxReadCount),
          storeFailed
        )
        if (read._tag !== "Success") return yield* Effect.fail(new UserNotFound({ loginName: UsersStream }))
        for (const { event } of read.events) {
          if (event !== undefined && event.eventType === UserEventTypes.User) logins.add(event.data.toString("utf8"))
        }
        if (read.isEndOfStream || read.nextEventNumber <= from) return logins
        from = read.nextEventNumber
      }
    })

    const createdDefaultUsers: Array<string> = []
    const service: UsersService = {
      createdDefaultUsers,
      create,
      update: (loginName, changes) =>
        Effect.zipRight(
          check(changes.groups === undefined ? undefined : invalidGroups(changes.groups)),
          change(loginName, true, (user) =>
            Effect.succeed({
              ...user,
              fullName: changes.fullName ?? user.fullName,
              groups: changes.groups ?? user.groups
            })
          )
        ),
      delete: (loginName) =>
        serialized(
          Effect.gen(function* () {
            const loaded = yield* readUser(loginName)
            // An unreadable user can still be deleted: that is how an admin gets rid of it.
            if (loaded._tag === "Missing") return yield* Effect.fail(new UserNotFound({ loginName }))
            yield* Effect.mapError(
              store.deleteStream(userStream(loginName), loaded.eventNumber, false),
              appended(loginName)
            )
            yield* announce(loginName)
          }).pipe(Effect.ensuring(Effect.sync(() => cache.invalidate(loginName))))
        ),
      enable: (loginName) => change(loginName, false, (user) => Effect.succeed({ ...user, disabled: false })),
      disable: (loginName) => change(loginName, true, (user) => Effect.succeed({ ...user, disabled: true })),
      resetPassword: (loginName, newPassword) =>
        Effect.zipRight(
          check(invalidPassword(newPassword)),
          change(loginName, true, (user) =>
            Effect.map(hashPassword(newPassword, config.passwordHash), (hash) => ({ ...user, hash }))
          )
        ),
      changePassword: (loginName, currentPassword, newPassword) =>
        Effect.zipRight(
          check(invalidPassword(newPassword)),
          change(loginName, true, (user) =>
            verifyPassword(currentPassword, user.hash)
              ? Effect.map(hashPassword(newPassword, config.passwordHash), (hash) => ({ ...user, hash }))
              : Effect.fail(new UserUnauthorized({ loginName, message: "The current password is wrong" }))
          )
        ),
      get: (loginName) => Effect.map(found(loginName), detailsOf),
      list: Effect.gen(function* () {
        const users: Array<UserDetails> = []
        for (const login of yield* listLogins) {
          // As the reference, one unreadable user fails the listing (its reason names the user to delete).
          const { loaded } = yield* lookup(login)
          if (loaded._tag !== "Missing") users.push(detailsOf(yield* usable(login, loaded)))
        }
        // The reference sorts with .NET's default (culture-aware) string order; "en" collation is its closest match.
        return users.sort(
          (a, b) =>
            a.loginName.localeCompare(b.loginName, "en") ||
            (a.loginName < b.loginName ? -1 : a.loginName > b.loginName ? 1 : 0)
        )
      }),
      current: (principal) =>
        principal.anonymous
          ? Effect.fail(new UserUnauthorized({ loginName: "", message: "Anonymous requests have no current user" }))
          : Effect.map(found(principal.name), detailsOf),
      authenticate: (loginName, password) => {
        // A cached login with the password verified before (nearly every request) is answered without the
        // lookup's Effect steps; this check has no side effect, so doing it before the Effect runs is safe.
        const cached = cache.get(loginName)
        const verified = cached === undefined ? undefined : alreadyVerified(cached, password)
        if (verified !== undefined) return Effect.succeed(verified)
        return Effect.flatMap(
          Effect.mapError(lookup(loginName), (e) => new AuthenticationUnavailable({ message: e.message })),
          (entry) => {
            // The entry checked above needs no second digest; one loaded or stored since might be verified.
            const now = entry === cached ? undefined : alreadyVerified(entry, password)
            return now !== undefined ? Effect.succeed(now) : verifySlowly(entry, password)
          }
        )
      }
    }

    /** As the reference: a login whose stream reads as "no stream" (never created, or soft-deleted) is created. */
    const createDefaultUsers = Effect.gen(function* () {
      for (const user of defaultUsers(config)) {
        const loaded = yield* readUser(user.loginName)
        if (loaded._tag === "Missing" && !loaded.hardDeleted) {
          yield* Effect.mapError(
            create(user),
            (e) =>
              new UserStoreFailed({
                message: `Could not create the default user '${user.loginName}': ${e.message}`,
                cause: e
              })
          )
          createdDefaultUsers.push(user.loginName)
        }
      }
    })
    if (config.createDefaultUsers) {
      // A single node creates them as it opens. In a cluster only the leader writes, and which node leads is
      // known later: each member tries every second until the users exist on it (created by whichever node
      // led, and replicated), so nothing waits for an election to open.
      if (store.replica === undefined) yield* createDefaultUsers
      else yield* Effect.forkScoped(Effect.retry(createDefaultUsers, Schedule.spaced(Duration.seconds(1))))
    }
    return service
  })
