/**
 * The live dashboard from the command line: `--ui` on `gepa optimize` and
 * `gepa resume` serves it while the run lasts (and prints its address),
 * `gepa watch <run-dir>` serves a run folder until Ctrl-C.
 *
 * @since 0.2.0
 */
import { Args, Command } from "@effect/cli"
import { Context, Effect, Layer, Option } from "effect"
import * as path from "node:path"
import * as Dashboard from "../Dashboard.js"
import { type CliInputError, inputError } from "./errors.js"
import { commands } from "./help.js"
import { dashboardOptions } from "./options.js"
import type { Environment } from "./run.js"

/**
 * The values of the dashboard's flags.
 *
 * @since 0.2.0
 * @category models
 */
export interface DashboardFlags {
  readonly uiHost: Option.Option<string>
  readonly uiPort: Option.Option<number>
}

const optionsOf = (flags: DashboardFlags, title: string): Dashboard.Options => ({
  title,
  ...(Option.isSome(flags.uiHost) ? { host: flags.uiHost.value } : {}),
  ...(Option.isSome(flags.uiPort) ? { port: flags.uiPort.value } : {})
})

const notice = (url: string, what: string) => `Live dashboard: ${url}\n  ${what}\n`

/**
 * Runs `effect` with the dashboard when `--ui` was given: the address is
 * printed once the server listens, and every run inside reports to it. A
 * server that cannot start (the port is taken) is an input error.
 *
 * @since 0.2.0
 * @category running
 */
export const withUi = (
  flags: DashboardFlags & { readonly ui: boolean },
  env: Pick<Environment, "stdout">,
  runDir: string
) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | CliInputError, Exclude<R, Dashboard.Dashboard>> => {
  // without --ui nothing provides a Dashboard, and the run needs none (it finds
  // a dashboard through the optional RunMonitor); TypeScript cannot tell that
  // Exclude<R, Dashboard> is then all of R
  if (!flags.ui) return effect as Effect.Effect<A, E, Exclude<R, Dashboard.Dashboard>>
  const layer = Dashboard.layer(optionsOf(flags, `GEPA run ${path.basename(runDir)}`)).pipe(
    Layer.tap((context) =>
      Effect.sync(() => env.stdout(notice(Context.get(context, Dashboard.Dashboard).url, "its Stop button ends the run like Ctrl-C (the state is saved)")))
    ),
    Layer.mapError((e) => inputError(e.message))
  )
  // (Effect.provide's type does not subtract a layer's output from a generic R)
  return Effect.provide(effect, layer) as Effect.Effect<A, E | CliInputError, Exclude<R, Dashboard.Dashboard>>
}

/**
 * `gepa watch <run-dir>`: serves the folder's dashboard until the returned
 * effect is interrupted (the command wraps it in `untilSignal`).
 *
 * @since 0.2.0
 * @category commands
 */
export const watchCommand = (
  env: Pick<Environment, "cwd" | "stdout">,
  untilSignal: (effect: Effect.Effect<void, CliInputError>) => Effect.Effect<void, CliInputError>
) =>
  Command.make(
    "watch",
    { runDir: Args.directory({ name: "run-dir" }).pipe(Args.withDescription("a run directory")), ...dashboardOptions },
    (flags) => {
      const runDir = path.resolve(env.cwd, flags.runDir)
      return untilSignal(Effect.scoped(Effect.gen(function*() {
        const info = yield* Dashboard.watch(runDir, optionsOf(flags, `GEPA run ${path.basename(runDir)}`)).pipe(
          Effect.mapError((e) => inputError(e.message))
        )
        env.stdout(notice(info.url, `serving ${runDir} (live while a process runs it); Ctrl-C ends the server`))
        return yield* Effect.never
      })))
    }
  ).pipe(Command.withDescription(commands.watch))
