import type { PGlite } from "@electric-sql/pglite";
import { NodeFS } from "@electric-sql/pglite/nodefs";

/**
 * PGlite's directory on disk, its files private to the process's user. PGlite writes through
 * Emscripten's NODEFS, which gives Node the modes the WebAssembly side asks for: 0666 for the files
 * of a new database, 0644 for some written later (pg_internal.init), whatever the process's umask.
 * Here every mode on its way to Node loses the group and other bits, so a file or directory is
 * 0600 / 0700 from its creation (docs/embedded-database.md, "Who may read it").
 */

export const PRIVATE_MODE_MASK = 0o077;

type PostgresModule = Parameters<NodeFS["init"]>[1];
type PreRun = (module: { NODEFS: EmscriptenNodeFs }) => void;

interface EmscriptenNodeFs {
  node_ops: {
    mknod(parent: unknown, name: string, mode: number, dev: number): unknown;
    setattr(node: unknown, attr: { mode?: number }): void;
  };
  stream_ops: { setattr?(stream: unknown, attr: { mode?: number }): void };
}

const privateMode = (mode: number) => mode & ~PRIVATE_MODE_MASK;
const privateAttr = <T extends { mode?: number }>(attr: T): T =>
  attr.mode === undefined ? attr : { ...attr, mode: privateMode(attr.mode) };

/** Masks the modes NODEFS hands to Node; runs before NodeFS mounts the data directory. */
const keepModesPrivate: PreRun = (module) => {
  const nodefs = module.NODEFS;
  const { mknod, setattr } = nodefs.node_ops;
  nodefs.node_ops.mknod = (parent, name, mode, dev) => mknod(parent, name, privateMode(mode), dev);
  nodefs.node_ops.setattr = (node, attr) => setattr(node, privateAttr(attr));
  const streamSetattr = nodefs.stream_ops.setattr;
  if (streamSetattr) nodefs.stream_ops.setattr = (stream, attr) => streamSetattr(stream, privateAttr(attr));
};

export class PrivateNodeFS extends NodeFS {
  override async init(pg: PGlite, opts: PostgresModule) {
    const { emscriptenOpts } = await super.init(pg, opts);
    const preRun = [keepModesPrivate, ...(emscriptenOpts.preRun ?? [])] as PostgresModule["preRun"];
    return { emscriptenOpts: { ...emscriptenOpts, preRun } };
  }
}
