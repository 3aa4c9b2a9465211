// ESLint (flat config), after Effect's own repository: eslint's and
// typescript-eslint's recommended rules, and formatting by dprint through
// @effect/eslint-plugin (`npm run lint`, `npm run lint:fix` to format).
// The dprint options are chosen to match the style this code base already
// had (double quotes, no semicolons, no trailing commas, 2 spaces), so the
// formatter's diff stayed small; the line width is wider than Effect's 120
// because many of our lines were written up to about 160.
import * as effectEslint from "@effect/eslint-plugin"
import js from "@eslint/js"
import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["**/dist", "**/node_modules", "**/*.md", "bench/results", "bench/reference", ".gepa-runs", "coverage", "scratch"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  ...effectEslint.configs.dprint,
  {
    files: ["**/*.ts", "**/*.mts", "**/*.mjs", "**/*.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module" },
    rules: {
      // the compiler checks unused locals (noUnusedLocals); parameters are often named for the reader
      "no-unused-vars": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none", ignoreRestSiblings: true }],
      // Effect's generators often yield nothing (Effect.gen for a lazy value)
      "require-yield": "off",
      "no-fallthrough": "off",
      "object-shorthand": "error",
      // counted and kept down by .ci/count-assertions.mjs instead (each remaining one is explained)
      "@typescript-eslint/no-non-null-assertion": "off",
      "@typescript-eslint/no-namespace": "off",
      "@typescript-eslint/no-empty-object-type": "off",
      "@typescript-eslint/array-type": ["error", { default: "generic", readonly: "generic" }],
      "@effect/dprint": [
        "error",
        {
          config: {
            indentWidth: 2,
            "module.sortImportDeclarations": "maintain",
            "module.sortExportDeclarations": "maintain",
            "importDeclaration.sortNamedImports": "maintain",
            "exportDeclaration.sortNamedExports": "maintain",
            lineWidth: 160,
            semiColons: "asi",
            quoteStyle: "alwaysDouble",
            trailingCommas: "never",
            operatorPosition: "maintain",
            "arrowFunction.useParentheses": "force"
          }
        }
      ]
    }
  },
  {
    // plain JavaScript runs on Node (the TypeScript files are checked by the compiler instead)
    files: ["**/*.mjs", "**/*.js"],
    languageOptions: {
      globals: { process: "readonly", console: "readonly", URL: "readonly", Buffer: "readonly", setTimeout: "readonly", clearTimeout: "readonly" }
    }
  },
  {
    // tests strip the terminal's escape codes from captured output
    files: ["test/**"],
    rules: { "no-control-regex": "off" }
  },
  {
    // type tests declare values only to check their types
    files: ["test/types/**"],
    rules: { "@typescript-eslint/no-unused-vars": "off" }
  }
)
