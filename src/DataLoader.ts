/**
 * Data access for the training and validation sets. Ids are strings; a
 * loader can fetch lazily (from disk, a database, an API).
 *
 * @since 0.1.0
 */
import { Array as Arr, Effect, Schema } from "effect"

/**
 * Fetching examples failed (or an id is unknown).
 *
 * @since 0.1.0
 * @category errors
 */
export class DataLoaderError extends Schema.TaggedError<DataLoaderError>()("DataLoaderError", {
  loader: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `Data loader "${this.loader}": ${this.detail}`
  }
}

/**
 * A data loader over examples of type `D`.
 *
 * @since 0.1.0
 * @category models
 */
export interface DataLoader<D> {
  readonly name: string
  /** all ids, in a stable order */
  readonly ids: Effect.Effect<ReadonlyArray<string>, DataLoaderError>
  /** the examples for `ids`, in the same order */
  readonly fetch: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<D>, DataLoaderError>
  readonly size: Effect.Effect<number, DataLoaderError>
}

/**
 * An in-memory loader. Ids are the positions ("0", "1", ...) unless `idOf`
 * gives each example its own id (ids must be unique).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromArray = <D>(
  items: ReadonlyArray<D>,
  options?: { readonly name?: string; readonly idOf?: (item: D, index: number) => string }
): DataLoader<D> => {
  const name = options?.name ?? "array"
  const ids = items.map((item, i) => (options?.idOf ? options.idOf(item, i) : String(i)))
  const index = new Map<string, number>()
  let duplicate: string | undefined
  ids.forEach((id, i) => {
    if (index.has(id)) duplicate ??= id
    index.set(id, i)
  })
  return {
    name,
    ids: duplicate === undefined
      ? Effect.succeed(ids)
      : Effect.fail(new DataLoaderError({ loader: name, detail: `duplicate id "${duplicate}"` })),
    size: Effect.succeed(items.length),
    fetch: (wanted) =>
      Effect.suspend(() => {
        const out: Array<D> = []
        for (const id of wanted) {
          const i = index.get(id)
          if (i === undefined) return Effect.fail(new DataLoaderError({ loader: name, detail: `unknown id "${id}"` }))
          out.push(Arr.unsafeGet(items, i))
        }
        return Effect.succeed(out)
      })
  }
}

/**
 * A loader from anything accepted where data is expected: an array or a
 * loader.
 *
 * @since 0.1.0
 * @category constructors
 */
export const ensure = <D>(data: ReadonlyArray<D> | DataLoader<D>, name: string): DataLoader<D> => isLoader(data) ? data : fromArray(data, { name })

// (Array.isArray does not narrow a ReadonlyArray out of a union)
const isLoader = <D>(data: ReadonlyArray<D> | DataLoader<D>): data is DataLoader<D> => !Array.isArray(data)
