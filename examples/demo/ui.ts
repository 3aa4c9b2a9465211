/**
 * `npm start -- --ui`: the offline demo with the live dashboard. The
 * simulated models answer at once, which would end the run before a page
 * has loaded; here they take a moment per call (a pace like a fast real
 * model), so the chart, the lineage and the events can be watched growing.
 * The page stays up after the run until Ctrl-C.
 *
 * @since 0.2.0
 */
import { Duration, Effect } from "effect"
import type { LanguageModel } from "effect-gepa/LanguageModel"
import type { DemoModels } from "./run.js"

/**
 * Whether the demo was started with `--ui`.
 *
 * @since 0.2.0
 * @category utils
 */
export const wantsUi = (argv: ReadonlyArray<string> = process.argv): boolean => argv.slice(2).includes("--ui")

/**
 * A model that answers after `delay` (each call; calls in flight overlap).
 *
 * @since 0.2.0
 * @category models
 */
export const paced = (model: LanguageModel, delay: Duration.DurationInput): LanguageModel => ({
  complete: (prompt) => Effect.delay(model.complete(prompt), Duration.decode(delay))
})

/**
 * The demo's simulated models at a watchable pace: 40 ms per task call
 * (eight in flight), 700 ms per reflection.
 *
 * @since 0.2.0
 * @category models
 */
export const pacedModels = (models: DemoModels): DemoModels =>
  models.kind !== "simulated" ? models : {
    ...models,
    description: `${models.description}, paced for watching`,
    taskModel: paced(models.taskModel, "40 millis"),
    reflectionModel: paced(models.reflectionModel, "700 millis")
  }

/**
 * Waits for Ctrl-C (SIGINT or SIGTERM), so the page of a finished run
 * stays up until the user is done with it.
 *
 * @since 0.2.0
 * @category utils
 */
export const untilInterrupted: Effect.Effect<void> = Effect.async<void>((resume) => {
  const done = () => resume(Effect.void)
  process.once("SIGINT", done)
  process.once("SIGTERM", done)
  return Effect.sync(() => {
    process.off("SIGINT", done)
    process.off("SIGTERM", done)
  })
})
