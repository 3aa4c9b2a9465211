/**
 * The live dashboard: a page in the browser that follows a run as it
 * happens. The validation score against metric calls and wall time (budget
 * used, ETA), the lineage as a layered graph (zoom, pan, folding of
 * branches that hold no Pareto member, the Pareto members ringed), the
 * Pareto coverage grid, each candidate's word-level diff against its
 * parent(s) with the minibatch scores before and after, the feedback the
 * reflection model was shown and the proposal's cost, the events as they
 * happen, and a Stop button.
 *
 * - `layer(options)`: serves the page while the effect it is provided to
 *   runs, fed by the events of every `Gepa.optimize` (or `optimizeAnything`)
 *   run inside it (through `RunMonitor`); Stop takes Ctrl-C's path (the
 *   state is saved and a run directory can be resumed). `Dashboard` in the
 *   context gives the address.
 * - `watch(dir, options)`: serves a run folder, live while another process
 *   writes it (its event log and saves), static once it has finished; Stop
 *   there writes the folder's stop file.
 *
 * Safety: binds to 127.0.0.1 unless told otherwise; every request, the
 * event stream included, needs the random token in the address (401
 * without); the page is self-contained (no CDN; a Content-Security-Policy
 * allows only its own script) and inserts every text of the run as text,
 * never as markup; every response is scrubbed of the given secrets and of
 * the values of secret-looking environment variables, with the model
 * layers' scrubber (`LanguageModel.scrubber`). A slow or gone browser never
 * slows the run: each has a bounded buffer and is resynced with a snapshot
 * when it overflows.
 *
 * Needs `@effect/platform` and `@effect/platform-node` (optional peers,
 * loaded only by this module).
 *
 * @since 0.2.0
 */
import { Context, Effect, Layer, Redacted, Ref, Schema, type Scope } from "effect"
import * as crypto from "node:crypto"
import type { GepaEvent } from "./Event.js"
import { follow } from "./internal/dashboard/follow.js"
import { field, isRecord } from "./internal/shared/fields.js"
import * as Model from "./internal/dashboard/model.js"
import { serve } from "./internal/dashboard/server.js"
import { scrubber } from "./LanguageModel.js"
import * as RunDir from "./RunDir.js"
import { RunMonitor } from "./RunMonitor.js"

/**
 * Options of the dashboard server: where it listens and what it shows.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /** the address to listen on (default "127.0.0.1": this machine only) */
  readonly host?: string | undefined
  /** the port (default 0: a free one) */
  readonly port?: number | undefined
  /** the token the address carries (default: 24 random bytes, hex) */
  readonly token?: string | undefined
  /** secrets to scrub from every response, beside the environment's secret-looking values */
  readonly secrets?: ReadonlyArray<Redacted.Redacted<string>> | undefined
  /** the page's title */
  readonly title?: string | undefined
  /** messages a browser may have waiting before it is resynced with a snapshot (default 64) */
  readonly clientBuffer?: number | undefined
  /** how often the page is updated, in milliseconds (default 250) */
  readonly refreshMillis?: number | undefined
}

/**
 * Where a dashboard is served.
 *
 * @since 0.2.0
 * @category models
 */
export interface Info {
  /** the address to open, token included */
  readonly url: string
  readonly host: string
  readonly port: number
  readonly token: string
  /** browsers connected now */
  readonly clients: () => number
  /** times a browser fell behind and was resynced */
  readonly resyncs: () => number
}

/**
 * The dashboard served by `layer`.
 *
 * @since 0.2.0
 * @category tags
 */
export class Dashboard extends Context.Tag("effect-gepa/Dashboard")<Dashboard, Info>() {}

/**
 * The server could not start (the port is taken, the address is not this
 * machine's), or the folder to watch is not a run folder.
 *
 * @since 0.2.0
 * @category errors
 */
export class DashboardError extends Schema.TaggedError<DashboardError>()("DashboardError", {
  what: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `dashboard: ${this.what}: ${this.detail}`
  }
}

const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL/i

/**
 * The values of secret-looking environment variables (`*_API_KEY`,
 * `*TOKEN*`, `*SECRET*`, `*PASSWORD*`), which every response is scrubbed of.
 *
 * @since 0.2.0
 * @category utils
 */
export const environmentSecrets = (env: NodeJS.ProcessEnv = process.env): ReadonlyArray<Redacted.Redacted<string>> =>
  Object.entries(env).flatMap(([name, value]) => SECRET_NAME.test(name) && typeof value === "string" && value.trim().length >= 4 ? [Redacted.make(value)] : [])

const settings = (options: Options | undefined, title: string) => {
  const clientBuffer = options?.clientBuffer ?? 64
  const refreshMillis = options?.refreshMillis ?? 250
  const port = options?.port ?? 0
  return {
    host: options?.host ?? "127.0.0.1",
    port,
    token: options?.token ?? crypto.randomBytes(24).toString("hex"),
    scrub: scrubber(...environmentSecrets(), ...(options?.secrets ?? [])),
    clientBuffer: Number.isInteger(clientBuffer) && clientBuffer > 0 ? clientBuffer : 64,
    refreshMillis: Number.isFinite(refreshMillis) && refreshMillis >= 10 ? refreshMillis : 250,
    title: options?.title ?? title
  }
}

const check = (options: Options | undefined): Effect.Effect<void, DashboardError> => {
  const port = options?.port
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
    return Effect.fail(new DashboardError({ what: "port", detail: `expected an integer from 0 to 65535, got ${port}` }))
  }
  if (options?.token !== undefined && options.token.length < 16) {
    return Effect.fail(new DashboardError({ what: "token", detail: "expected at least 16 characters" }))
  }
  return Effect.void
}

const listenError = (host: string, port: number) => (e: unknown) => {
  const cause = field(e, "cause")
  return new DashboardError({ what: `listen on ${host}:${port}`, detail: String(cause instanceof Error ? cause.message : e) })
}

/**
 * Serves the live page for the effect it is provided to. Every run started
 * inside sends it its events; the page's Stop button stops them gracefully.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (options?: Options): Layer.Layer<Dashboard | RunMonitor, DashboardError> =>
  Layer.scopedContext(Effect.gen(function*() {
    yield* check(options)
    const s = settings(options, "GEPA run")
    const model = Model.make()
    const stopped = yield* Ref.make(false)
    const served = yield* serve({
      model,
      title: s.title,
      mode: "live",
      stop: Effect.gen(function*() {
        const status = model.info().status
        if (status !== "running" && status !== "starting") {
          return { accepted: false, message: `the run is ${status}` }
        }
        yield* Ref.set(stopped, true)
        return { accepted: true, message: "stop requested: the run ends after the proposals in flight, its state saved" }
      })
    }, s).pipe(Effect.mapError(listenError(s.host, s.port)))
    const monitor = {
      name: "dashboard",
      onEvent: (event: GepaEvent) =>
        // O(1) on the engine's fiber: the server's own fiber does the rest
        // (an event is always an object: isRecord only lets the model read its fields by name)
        Effect.sync(() => {
          if (isRecord(event)) model.event(event, Date.now())
        }),
      stopRequested: Ref.get(stopped)
    }
    return Context.make(Dashboard, { ...served }).pipe(Context.add(RunMonitor, monitor))
  }))

/**
 * Serves a run folder: live while another process writes it, static once
 * it has finished. Fails when `dir` holds no run (no event log and no saved
 * state).
 *
 * @since 0.2.0
 * @category constructors
 */
export const watch = (dir: string, options?: Options): Effect.Effect<Info, DashboardError, Scope.Scope> =>
  Effect.gen(function*() {
    yield* check(options)
    const notFound = (e: { readonly message: string }) => new DashboardError({ what: dir, detail: e.message })
    const model = Model.make()
    const follower = yield* Effect.mapError(follow(dir, model), notFound)
    const root = follower.root
    const holds = yield* Effect.map(
      Effect.forEach([RunDir.FILES.events, RunDir.FILES.state, RunDir.FILES.result], (f) => RunDir.exists(root, f)),
      (found) => found.some((x) => x)
    )
    if (!holds) {
      return yield* new DashboardError({
        what: root,
        detail: `not a run folder (no ${RunDir.FILES.events}, ${RunDir.FILES.state} or ${RunDir.FILES.result})`
      })
    }
    const s = settings(options, `GEPA run ${follower.name}`)
    return yield* serve({
      model,
      title: s.title,
      mode: "watch",
      tick: follower.tick,
      stop: Effect.gen(function*() {
        if (!follower.running()) return { accepted: false, message: "no process is running this folder" }
        const written = yield* Effect.either(RunDir.requestStop(root, `requested by the dashboard at ${new Date().toISOString()}\n`))
        if (written._tag === "Left") return { accepted: false, message: `could not write the stop file: ${written.left.detail}` }
        return { accepted: true, message: "stop file written: the run saves its state and ends; resume continues it" }
      })
    }, s).pipe(Effect.mapError(listenError(s.host, s.port)))
  })
