import { importEsm } from '../esm';

// mp4box ships its types for `moduleResolution: node16`/`bundler` only (package exports), which
// this build's `node` resolution does not read: the types are taken from the file itself.
type Mp4box = typeof import('mp4box/dist/mp4box.all.d.mts');

let loaded: Promise<Mp4box> | undefined;

/** MP4Box.js, imported once, its console logging turned down to errors. */
export function mp4box(): Promise<Mp4box> {
  loaded ??= importEsm<Mp4box>('mp4box').then((module) => {
    module.Log.setLogLevel(module.Log.error);
    return module;
  });
  return loaded;
}
