/**
 * The dashboard's HTTP side on @effect/platform: the page, the event stream
 * (server-sent events), a candidate's detail and the stop request, every
 * one behind the token.
 *
 * Each browser has a bounded buffer. A flush serializes its delta once and
 * offers it to every buffer without waiting; a full buffer marks its client
 * stale and gets nothing more until the client has caught up, when it is
 * sent a fresh snapshot instead (drop and resync). Nothing the run does
 * waits on a browser.
 *
 * @internal
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Option, Queue, Schedule, type Scope, Stream } from "effect"
import * as crypto from "node:crypto"
import * as http from "node:http"
import type { Model } from "./model.js"
import { page } from "./page.js"

/** What the server shows and how a stop is asked for. */
export interface Source {
  readonly model: Model
  /** asks the run to stop; the text says what happens (shown on the page) */
  readonly stop: Effect.Effect<{ readonly accepted: boolean; readonly message: string }>
  /** runs before every flush (the folder follower reads new lines here) */
  readonly tick?: Effect.Effect<void> | undefined
  readonly title: string
  /** "live": in the run's process; "watch": following a run folder */
  readonly mode: "live" | "watch"
}

export interface ServeOptions {
  readonly host: string
  readonly port: number
  readonly token: string
  readonly scrub: (text: string) => string
  /** messages a client may have waiting before it is resynced */
  readonly clientBuffer: number
  readonly refreshMillis: number
}

export interface Served {
  readonly url: string
  readonly host: string
  readonly port: number
  readonly token: string
  /** clients connected now (for tests and the bench) */
  readonly clients: () => number
  /** resyncs so far (for tests and the bench) */
  readonly resyncs: () => number
}

/**
 * One browser's buffer: `offer` never waits; once `capacity` frames wait
 * unread the client is stale and gets nothing more until it takes again,
 * when it is handed a fresh snapshot instead of what it missed.
 */
export interface ClientBuffer {
  readonly offer: (frame: string) => void
  /** the next frame; a snapshot (built then) after an overflow; `None` once ended and everything was taken */
  readonly take: (snapshot: () => string) => Effect.Effect<string, Option.Option<never>>
  readonly stale: () => boolean
  /** no more frames: the stream ends once it has taken what is buffered */
  readonly end: () => void
  readonly close: Effect.Effect<void>
}

// the end of a stream, in the queue after its last frame (never a frame: frames start with "data:")
const END = ""

export const makeClientBuffer = (capacity: number, onResync: () => void = () => {}): Effect.Effect<ClientBuffer> =>
  Effect.map(Queue.bounded<string>(capacity), (queue) => {
    let stale = false
    let ended = false
    return {
      offer: (frame) => {
        if (!stale && !queue.unsafeOffer(frame)) stale = true
      },
      take: (snapshot) =>
        Effect.suspend((): Effect.Effect<string, Option.Option<never>> => {
          if (!stale) {
            if (ended && queue.unsafeSize().pipe(Option.getOrElse(() => 0)) === 0) return Effect.fail(Option.none())
            return Effect.flatMap(Queue.take(queue), (frame) => frame === END ? Effect.fail(Option.none()) : Effect.succeed(frame))
          }
          return Effect.map(Queue.takeAll(queue), () => {
            stale = false
            onResync()
            // the snapshot holds everything up to its `seq`; the page drops older deltas
            return snapshot()
          })
        }),
      stale: () => stale,
      end: () => {
        ended = true
        // wakes a take waiting on an empty queue (a full one has frames to take first)
        queue.unsafeOffer(END)
      },
      close: Queue.shutdown(queue)
    }
  })

const securityHeaders = (nonce?: string) => ({
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "content-security-policy": nonce === undefined
    ? "default-src 'none'; frame-ancestors 'none'"
    : `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; ` +
      `img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`
})

const sameToken = (given: string | null, token: string): boolean => {
  if (given === null) return false
  const a = Buffer.from(given)
  const b = Buffer.from(token)
  return a.length === b.length && crypto.timingSafeEqual(a, b)
}

const text = (status: number, body: string) => HttpServerResponse.text(body, { status, headers: securityHeaders() })

const encoder = new TextEncoder()

/** Starts the server for the scope; ends every event stream before the server closes. */
export const serve = (source: Source, options: ServeOptions): Effect.Effect<Served, unknown, Scope.Scope> =>
  Effect.gen(function*() {
    const clients = new Set<ClientBuffer>()
    let seq = 0
    let resyncs = 0
    const { model } = source
    const { scrub } = options
    const frame = (payload: Record<string, unknown>) => `data: ${scrub(JSON.stringify(payload))}\n\n`
    const snapshotFrame = () => frame({ ...model.snapshot(), seq, mode: source.mode, title: source.title })

    const broadcast = (payload: Record<string, unknown>) => {
      seq++
      if (clients.size === 0) return
      const line = frame({ ...payload, seq })
      // never waits: a full buffer is resynced once the client catches up
      for (const client of clients) client.offer(line)
    }
    const step = Effect.suspend(() => source.tick ?? Effect.void).pipe(
      Effect.zipRight(Effect.sync(() => {
        const delta = model.flush()
        if (delta !== undefined) broadcast(delta)
      })),
      Effect.catchAllCause((cause) => Effect.logDebug("dashboard: refresh failed", cause))
    )
    yield* Effect.forkScoped(Effect.repeat(step, Schedule.spaced(options.refreshMillis)))

    const events = Effect.gen(function*() {
      const client = yield* makeClientBuffer(options.clientBuffer, () => resyncs++)
      clients.add(client)
      const body = Stream.concat(
        Stream.succeed(snapshotFrame()),
        Stream.merge(
          Stream.repeatEffectOption(client.take(snapshotFrame)),
          // a comment now and then keeps proxies and idle timeouts away
          Stream.repeatEffect(Effect.as(Effect.sleep("15 seconds"), ": keep-alive\n\n")),
          { haltStrategy: "left" }
        )
      ).pipe(
        Stream.map((s) => encoder.encode(s)),
        Stream.ensuring(Effect.zipRight(Effect.sync(() => clients.delete(client)), client.close))
      )
      return HttpServerResponse.stream(body, {
        contentType: "text/event-stream",
        headers: { ...securityHeaders(), "x-accel-buffering": "no", "connection": "keep-alive" }
      })
    })

    const app = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const url = new URL(request.url, "http://dashboard.invalid")
      if (!sameToken(url.searchParams.get("token"), options.token)) {
        return text(401, "unauthorized: open the address printed when the dashboard started (it carries the token)\n")
      }
      const route = `${request.method} ${url.pathname}`
      switch (route) {
        case "GET /":
        case "GET /index.html": {
          const nonce = crypto.randomBytes(16).toString("base64")
          return HttpServerResponse.text(page(nonce, source.title), {
            contentType: "text/html; charset=utf-8",
            headers: securityHeaders(nonce)
          })
        }
        case "GET /events":
          return yield* events
        case "GET /snapshot.json":
          return HttpServerResponse.text(scrub(JSON.stringify({ ...model.snapshot(), seq, mode: source.mode, title: source.title })), {
            contentType: "application/json",
            headers: securityHeaders()
          })
        case "GET /candidate.json": {
          const i = Number(url.searchParams.get("i"))
          const detail = Number.isInteger(i) && i >= 0 ? model.detail(i) : undefined
          return detail === undefined
            ? text(404, "no such candidate\n")
            : HttpServerResponse.text(scrub(JSON.stringify(detail)), { contentType: "application/json", headers: securityHeaders() })
        }
        case "POST /stop": {
          const outcome = yield* source.stop
          if (outcome.accepted) {
            model.event({ _tag: "StopRequested" }, Date.now())
          }
          return HttpServerResponse.text(JSON.stringify(outcome), {
            status: outcome.accepted ? 202 : 409,
            contentType: "application/json",
            headers: securityHeaders()
          })
        }
        default:
          return url.pathname === "/stop" ? text(405, "use POST\n") : text(404, "not found\n")
      }
    })

    const node = http.createServer()
    const server = yield* NodeHttpServer.make(() => node, { host: options.host, port: options.port })
    // runs before the server's own finalizer (which waits for open connections): the last view
    // of the run goes to every stream, each stream ends cleanly once it has sent it (a page that
    // was told the run stopped says so), and only then are the connections closed
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        yield* step
        for (const client of clients) client.end()
        yield* Effect.sync(() => clients.size).pipe(
          Effect.repeat({ until: (n) => n === 0, schedule: Schedule.spaced("10 millis") }),
          Effect.timeout("2 seconds"),
          Effect.ignore
        )
        for (const client of clients) yield* client.close
        clients.clear()
        yield* Effect.sync(() => node.closeAllConnections())
      })
    )
    yield* server.serve(app)
    const address = server.address
    const port = address._tag === "TcpAddress" ? address.port : options.port
    const shownHost = options.host.includes(":") ? `[${options.host}]` : options.host
    return {
      url: `http://${shownHost}:${port}/?token=${options.token}`,
      host: options.host,
      port,
      token: options.token,
      clients: () => clients.size,
      resyncs: () => resyncs
    }
  })
