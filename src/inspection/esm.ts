/**
 * import() of an ES-module-only package (hyparquet, h5wasm) from this CommonJS build. tsc
 * with `module: commonjs` turns a literal `import()` into `require()`, which cannot load
 * them; an import() compiled by `new Function` stays a real one, in the built service
 * (node dist/...) and under jest (which runs with --experimental-vm-modules, `npm test`).
 * Each module is imported once.
 */
import { randomUUID } from 'node:crypto';

// The source differs per evaluation of this module: V8 caches a `new Function` by its source and
// would hand a later jest test file the function compiled in an earlier file's (torn-down)
// context, whose import() jest then refuses ("import a file after the Jest environment has
// been torn down"). The service evaluates this module once, so for it this changes nothing.
// eslint-disable-next-line @typescript-eslint/no-implied-eval
const dynamicImport = new Function('specifier', `return import(specifier); // ${randomUUID()}`) as (specifier: string) => Promise<unknown>;
const loaded = new Map<string, Promise<unknown>>();

export function importEsm<T>(specifier: string): Promise<T> {
  let module = loaded.get(specifier);
  if (!module) {
    // A failed import is not kept: the next inspection tries again.
    module = dynamicImport(specifier).catch((error: unknown) => {
      loaded.delete(specifier);
      throw error;
    });
    loaded.set(specifier, module);
  }
  return module as Promise<T>;
}
