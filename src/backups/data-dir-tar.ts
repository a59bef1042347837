import type { PGlite } from "@electric-sql/pglite";

/**
 * Where PGlite mounts its data directory inside its own file system (the same for a directory on
 * disk and for memory://): dumpDataDir reads from here.
 */
const PGDATA = "/pglite/data";

/**
 * PostgreSQL's own entries at the top of a data directory. DATA_DIR holds ours too (encryption.key,
 * backups/, the server's lock and socket): PGlite's dumpDataDir would tar them all, so every backup
 * would contain the key it must not carry and every earlier backup.
 */
const POSTGRES_ENTRY = /^(PG_VERSION|base|global|pg_[a-z_]+|pg_hba\.conf|pg_ident\.conf|postgresql(\.auto)?\.conf)$/;

const BLOCK = 512;

interface EmscriptenFs {
  readdir(path: string): string[];
  stat(path: string): { mode: number; size: number; mtime: Date | number };
  isFile(mode: number): boolean;
  isDir(mode: number): boolean;
  readFile(path: string, options: { encoding: "binary" }): Uint8Array;
}

/**
 * The PostgreSQL files of a running PGlite as a tar (the format `PGlite.create({ loadDataDir })`
 * reads), taken inside the instance: no transaction is open (the transaction lock is held), the
 * data files are brought up to date (CHECKPOINT) and no statement runs while the files are read
 * (the query lock is held). The caller gzips it after the locks are released.
 */
export async function tarPgliteDataDir(pglite: PGlite): Promise<Buffer> {
  return pglite.transaction(async (tx) => {
    await tx.exec("checkpoint");
    return pglite._runExclusiveQuery(async () => {
      const fs = pglite.Module.FS as unknown as EmscriptenFs;
      const blocks: Buffer[] = [];
      const names = fs.readdir(PGDATA).filter((name) => POSTGRES_ENTRY.test(name));
      if (!names.includes("PG_VERSION")) throw new Error(`no PostgreSQL data directory at ${PGDATA} inside PGlite`);
      const walk = (relative: string) => {
        const stat = fs.stat(`${PGDATA}/${relative}`);
        const mtime = Math.floor(new Date(stat.mtime).getTime() / 1000);
        if (fs.isDir(stat.mode)) {
          blocks.push(header(relative, "5", 0o755, 0, mtime));
          for (const name of fs.readdir(`${PGDATA}/${relative}`)) {
            if (name !== "." && name !== "..") walk(`${relative}/${name}`);
          }
        } else if (fs.isFile(stat.mode)) {
          const data = fs.readFile(`${PGDATA}/${relative}`, { encoding: "binary" });
          blocks.push(header(relative, "0", 0o600, data.length, mtime), Buffer.from(data));
          const padding = (BLOCK - (data.length % BLOCK)) % BLOCK;
          if (padding) blocks.push(Buffer.alloc(padding));
        }
      };
      for (const name of names) walk(name);
      blocks.push(Buffer.alloc(BLOCK * 2));
      return Buffer.concat(blocks);
    });
  });
}

/** A POSIX ustar header. */
function header(name: string, type: "0" | "5", mode: number, size: number, mtime: number): Buffer {
  if (Buffer.byteLength(name) > 100) throw new Error(`path too long for the backup archive: ${name}`);
  const block = Buffer.alloc(BLOCK);
  const octal = (value: number, width: number) => `${value.toString(8).padStart(width - 1, "0")}\0`;
  block.write(name, 0, "utf8");
  block.write(octal(mode, 8), 100, "ascii");
  block.write(octal(0, 8), 108, "ascii");
  block.write(octal(0, 8), 116, "ascii");
  block.write(octal(size, 12), 124, "ascii");
  block.write(octal(mtime, 12), 136, "ascii");
  block.write(" ".repeat(8), 148, "ascii");
  block.write(type, 156, "ascii");
  block.write("ustar\0", 257, "ascii");
  block.write("00", 263, "ascii");
  let checksum = 0;
  for (const byte of block) checksum += byte;
  block.write(`${checksum.toString(8).padStart(6, "0")}\0 `, 148, "ascii");
  return block;
}
