#!/usr/bin/env node
// The `gepa` command. The CLI is written in TypeScript; tsx compiles it on
// the fly, so the command works from a checkout without a build step.
import { register } from "tsx/esm/api"

register()
const { main } = await import("../src/Cli.ts")
await main()
