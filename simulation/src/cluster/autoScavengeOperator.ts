/**
 * The auto-scavenge workload of a multi-node seed: an operator on the clients' node who configures the
 * seed's schedule once the cluster has formed, then, every so often while the faults run, pauses it,
 * resumes it or asks for its status — each a request to `/auto-scavenge/*` as the admin, sent to a member of
 * its choosing (run on that member's scheduler and clock), which takes it itself when it leads and passes
 * it to the leader otherwise (202). No 307 to follow: any member accepts.
 *
 * It remembers when auto-scavenge was certainly paused — from a 200 to a pause (only the leader answers
 * 200; a member that passed the command on answers 202) until it sent the next resume that was not
 * refused — for the rule that no node scavenge starts while paused. Before the liveness phase it resumes
 * until the leader says auto-scavenge is neither paused nor pausing.
 */
import { Duration, Effect, Option } from "effect"
import type { AutoScavengeReply, UserCommand } from "@vellum/auto-scavenge"
import type { HttpRequest } from "@vellum/http"
import type { Prng } from "@vellum/platform"
import { replyText } from "../atomReplies.js"
import type { Coverage } from "../coverage.js"
import type { ClusterWorld } from "./clusterWorld.js"

/** How long the operator waits for a member to answer a command. */
const AnswerTimeoutMs = 5_000
const AdminAuthorization = `Basic ${Buffer.from("admin:changeit").toString("base64")}`

/** The request a command is, as the operator sends it. */
const requestOf = (command: UserCommand, host: string): HttpRequest => {
  const headers = { host, authorization: AdminAuthorization }
  switch (command._tag) {
    case "GetStatus":
      return {
        method: "GET",
        url: "/auto-scavenge/status",
        headers: { ...headers, accept: "application/json" },
        body: undefined
      }
    case "Configure":
      return {
        method: "POST",
        url: "/auto-scavenge/configure",
        headers: { ...headers, "content-type": "application/json" },
        body: Buffer.from(JSON.stringify({ schedule: command.schedule }))
      }
    case "Pause":
    case "Resume":
      return { method: "POST", url: `/auto-scavenge/${command._tag.toLowerCase()}`, headers, body: undefined }
  }
}

export interface PausedWindow {
  readonly from: number
  to: number | undefined
}

export class AutoScavengeOperator {
  readonly pausedWindows: Array<PausedWindow> = []
  configured = false

  constructor(
    private readonly prng: Prng,
    private readonly cluster: ClusterWorld,
    private readonly coverage: Coverage,
    private readonly schedule: string
  ) {}

  private get now(): number {
    return this.cluster.world.now
  }

  /**
   * Sends a command to a member over HTTP; its answer as the service's reply it renders, or undefined when
   * the member is down, did not answer, or does not know the admin yet (401). Any other status the routes
   * do not give the admin fails the run.
   */
  send(name: string, command: UserCommand): Effect.Effect<AutoScavengeReply | undefined> {
    const started = this.cluster.access.start(name, requestOf(command, this.cluster.member(name).http))
    if (started === undefined) return Effect.succeed(undefined)
    return Effect.map(Effect.timeoutOption(started.fiber.await, Duration.millis(AnswerTimeoutMs)), (exit) => {
      if (Option.isNone(exit) || exit.value._tag !== "Success") return undefined
      const reply = exit.value.value.reply
      const text = replyText(reply)
      switch (reply.status) {
        case 200:
          return command._tag === "GetStatus"
            ? { _tag: "Status", body: JSON.parse(text) as Record<string, unknown> }
            : { _tag: "Done" }
        case 202:
          return { _tag: "Accepted" }
        case 400:
          return { _tag: "Rejected", message: String(JSON.parse(text)) }
        case 500:
        case 503:
          return { _tag: "Failed", detail: text }
        case 401:
          // A fresh or restarted member that has not caught up with the default users yet (router.ts).
          return undefined
        default:
          this.cluster.fail(`auto-scavenge ${command._tag} on ${name} answered ${reply.status}: ${text}`)
          return undefined
      }
    })
  }

  private anyMember(): string {
    return this.prng.pick(this.cluster.members).name
  }

  /** Configures the schedule, then acts every so often while `running` holds. */
  run(running: () => boolean): Effect.Effect<void> {
    return Effect.gen(this, function* () {
      const auto = this.cluster.options.autoScavenge!
      while (!this.configured && running()) {
        const reply = yield* this.send(this.anyMember(), { _tag: "Configure", schedule: this.schedule })
        if (reply?._tag === "Done" || reply?._tag === "Accepted") {
          this.configured = true
          this.cluster.world.trace(`auto-scavenge configured: ${this.schedule} (${reply._tag})`)
        } else {
          this.cluster.world.trace(
            `auto-scavenge configure: ${reply === undefined ? "no answer" : JSON.stringify(reply)}`
          )
          yield* Effect.sleep(Duration.millis(200))
        }
      }
      while (running()) {
        yield* Effect.sleep(Duration.millis(this.prng.int(...auto.operatorGapMs)))
        if (!running()) return
        const r = this.prng.next()
        if (r < auto.pauseChance) yield* this.pause()
        else if (r < 2 * auto.pauseChance || this.open() !== undefined) yield* this.resume()
        else yield* this.send(this.anyMember(), { _tag: "GetStatus" })
      }
    })
  }

  private open(): PausedWindow | undefined {
    const last = this.pausedWindows[this.pausedWindows.length - 1]
    return last !== undefined && last.to === undefined ? last : undefined
  }

  private pause(): Effect.Effect<void> {
    return Effect.gen(this, function* () {
      const reply = yield* this.send(this.anyMember(), { _tag: "Pause" })
      this.cluster.world.trace(`auto-scavenge pause: ${reply?._tag ?? "no answer"}`)
      if (reply?._tag === "Done") {
        this.coverage.hit("autoScavenge.paused")
        if (this.open() === undefined) this.pausedWindows.push({ from: this.now, to: undefined })
      } else if (reply?._tag === "Accepted") this.coverage.hit("autoScavenge.pauseAccepted")
    })
  }

  /** One resume; true when it was not refused (a refusal: still pausing). */
  private resume(): Effect.Effect<boolean> {
    return Effect.gen(this, function* () {
      const sentAt = this.now
      const reply = yield* this.send(this.anyMember(), { _tag: "Resume" })
      this.cluster.world.trace(`auto-scavenge resume: ${reply?._tag ?? "no answer"}`)
      if (reply?._tag === "Rejected") {
        this.coverage.hit("autoScavenge.resumeWhilePausing")
        return false
      }
      const open = this.open()
      if (open !== undefined) open.to = sentAt
      return reply !== undefined && reply._tag !== "Failed"
    })
  }

  /** The liveness phase: resumes until the leader's status is neither Paused nor Pausing. */
  resumeForGood(leader: () => string | undefined): Effect.Effect<void> {
    return Effect.gen(this, function* () {
      for (;;) {
        const at = leader()
        if (at !== undefined) {
          const status = yield* this.send(at, { _tag: "GetStatus" })
          const state = status?._tag === "Status" ? status.body["state"] : undefined
          if (state !== undefined && state !== "Paused" && state !== "Pausing") return
          if (state !== undefined) yield* this.resume()
        }
        yield* Effect.sleep(Duration.millis(500))
      }
    })
  }
}
