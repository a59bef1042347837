import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { and, asc, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeSchemaVersion, createBackup } from "../src/backups/backups.service.js";
import { loadConfig } from "../src/config.js";
import { type Database, type Db, openDatabase } from "../src/db/client.js";
import {
  campaigns,
  collectionCounts,
  donations,
  organizations,
  processorAccounts,
  supporters,
} from "../src/db/schema.js";
import { runPeriodicBackup, startPeriodicBackups } from "../src/jobs/backup.job.js";
import { createSecretBox, KEY_FILE_NAME } from "../src/secrets/secret-box.js";
import { runCliInProcess, runCli as spawnDonata } from "./helpers/cli.js";
import { createPrivateDatabase, testDatabaseUrl } from "./helpers/database.js";
import {
  connectFakeStripeAccount,
  fakeCampaign,
  fakeDonation,
  fakeSupporter,
  fakeTenant,
  unique,
} from "./helpers/factories.js";

/**
 * `donata backup` and `donata restore` on the suite's database kind: a PGlite directory, or (with
 * TEST_DATABASE_URL) PostgreSQL databases created for this file. Every source and target is a
 * database of its own, so the restored state is compared whole.
 */

const TEST_TIMEOUT = 180_000;
const sharedUrl = testDatabaseUrl();
const kind = sharedUrl ? "postgres" : "pglite";
let onCluster = false;
const children = new Set<ChildProcess>();
let scratch = "";
const drops: (() => Promise<void>)[] = [];

/** A database of the test's own and the environment that points the CLI at it. */
interface Place {
  env: Record<string, string>;
  /** PGlite: the data directory; PostgreSQL: the directory of the key file (DATA_DIR). */
  dataDir: string;
  open(): Promise<Database>;
}

async function newPlace(label: string, options: { migrate: boolean }): Promise<Place> {
  const dataDir = path.join(scratch, `${label}-${unique(6)}`);
  if (sharedUrl) {
    // On a Citus cluster, what is backed up is a single-node database (donata backup refuses a
    // cluster) and what is restored into is a cluster's: the way a database moves to a cluster.
    const { url, drop } = await createPrivateDatabase(sharedUrl, label, { ...options, plain: options.migrate });
    drops.push(drop);
    return {
      env: { DATABASE_URL: url, DATA_DIR: dataDir },
      dataDir,
      open: () => openDatabase({ databaseUrl: url, dataDir, poolSize: 2 }),
    };
  }
  const place: Place = {
    env: { DATA_DIR: dataDir },
    dataDir,
    open: () => openDatabase({ databaseUrl: undefined, dataDir }),
  };
  if (options.migrate) {
    const database = await place.open();
    await database.migrate();
    await database.close();
  }
  return place;
}

async function using<T>(place: Place, work: (db: Db, database: Database) => Promise<T>): Promise<T> {
  const database = await place.open();
  try {
    return await work(database.db, database);
  } finally {
    await database.close();
  }
}

/** The CLI in this process, as `donata …` would run (exit code and what it printed). */
async function donata(args: string[], env: Record<string, string>) {
  const { code, stdout, stderr } = await runCliInProcess(args, { LOG_LEVEL: "warn", ...env });
  return { code, stdout, stderr };
}

const count = async (db: Db, table: typeof organizations | typeof supporters | typeof donations) =>
  Number((await db.select({ n: sql<string>`count(*)` }).from(table))[0]?.n);

async function snapshot(db: Db) {
  return {
    organizations: await count(db, organizations),
    supporters: await count(db, supporters),
    donations: await count(db, donations),
    campaigns: await db.select({ id: campaigns.id, title: campaigns.title }).from(campaigns).orderBy(asc(campaigns.id)),
    supporterRows: await db
      .select({ id: supporters.id, email: supporters.email, firstName: supporters.firstName })
      .from(supporters)
      .orderBy(asc(supporters.id)),
    donationRows: await db
      .select({ id: donations.id, code: donations.code, amount: donations.amount, state: donations.state })
      .from(donations)
      .orderBy(asc(donations.id)),
    stripeKeys: await db
      .select({ last4: processorAccounts.secretKeyLast4, sealed: processorAccounts.secretKeyCiphertext })
      .from(processorAccounts),
  };
}

const keyHex = () => randomBytes(32).toString("hex");
const keyIdOf = (hex: string) => createSecretBox(Buffer.from(hex, "hex")).keyId;

let source: Place;
let sourceKey = "";
let backupFile = "";
let backedUp: Awaited<ReturnType<typeof snapshot>>;
let organizationId = 0;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), "donata-backups-"));
  if (sharedUrl) {
    const database = await openDatabase({ databaseUrl: sharedUrl, dataDir: "", poolSize: 1 });
    const found = (await database.db.execute(sql`select 1 from pg_extension where extname = 'citus'`)) as unknown as {
      rows: unknown[];
    };
    onCluster = found.rows.length > 0;
    await database.close();
  }
  source = await newPlace("bksrc", { migrate: true });
  // The default set-up: the key in DATA_DIR/encryption.key, next to the embedded database.
  sourceKey = keyHex();
  await mkdir(source.dataDir, { recursive: true });
  await writeFile(path.join(source.dataDir, KEY_FILE_NAME), `${sourceKey}\n`, { mode: 0o600 });
  await using(source, async (db) => {
    const tenant = await fakeTenant(db);
    organizationId = tenant.organizationId;
    const campaign = await fakeCampaign(db, organizationId);
    for (let index = 0; index < 4; index++) {
      const supporter = await fakeSupporter(db, organizationId);
      await fakeDonation(db, organizationId, { supporterId: supporter.id, campaignId: campaign.id });
    }
    await connectFakeStripeAccount(db, organizationId, createSecretBox(Buffer.from(sourceKey, "hex")));
  });
}, TEST_TIMEOUT);

afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  for (const drop of drops) await drop().catch(() => {});
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe(`backup and restore (${kind})`, () => {
  it(
    "restores exactly the backed-up state into a fresh database, without what was written after",
    async () => {
      backedUp = await using(source, (db) => snapshot(db));
      // On PGlite the backup goes into DATA_DIR/backups, beside a file of the user's: neither may end up inside it.
      backupFile = path.join(source.dataDir, "backups", "manual.backup");
      await mkdir(path.dirname(backupFile), { recursive: true });
      await writeFile(path.join(source.dataDir, "backups", "notes.txt"), "the user's own file\n");
      const made = await donata(["backup", "--out", backupFile], source.env);
      expect(made, made.stderr).toMatchObject({ code: 0, stderr: "" });
      expect(made.stdout).toContain(`Backup of the ${kind} database written to ${backupFile}`);
      const manifest = JSON.parse((await readFile(backupFile, "utf8")).split("\n")[1] as string);
      expect(manifest).toMatchObject({
        format: 1,
        database: kind,
        schema: { migrations: codeSchemaVersion().migrations, last_tag: codeSchemaVersion().last.tag },
        encryption_key_id: keyIdOf(sourceKey),
        processor_accounts: 1,
        payload: { format: kind === "pglite" ? "pglite-datadir-tar-gzip" : "pg_dump-custom" },
      });
      expect(JSON.stringify(manifest)).not.toContain(sourceKey);

      // Written after the backup: none of it may come back.
      await using(source, async (db) => {
        const campaign = await fakeCampaign(db, organizationId);
        const later = await fakeSupporter(db, organizationId, { email: `later-${unique()}@example.test` });
        await fakeDonation(db, organizationId, { supporterId: later.id, campaignId: campaign.id });
        await db.update(supporters).set({ firstName: "Renamed" });
        await db.delete(donations).where(eq(donations.id, backedUp.donationRows[0]?.id ?? 0));
      });

      const target = await newPlace("bkdst", { migrate: false });
      await mkdir(target.dataDir, { recursive: true });
      await writeFile(path.join(target.dataDir, KEY_FILE_NAME), `${sourceKey}\n`);
      const restored = await donata(["restore", backupFile], target.env);
      expect(restored, restored.stderr).toMatchObject({ code: 0, stderr: "" });
      expect(restored.stdout).toContain(`Restored the backup of ${manifest.created_at} (${kind}, Donata 0.1.0) into `);
      expect(restored.stdout).toContain(
        onCluster
          ? "On the Citus cluster: migrated, every tenant table distributed by organization"
          : "The schema is this Donata's: ready to start.",
      );
      expect(restored.stdout).not.toContain("Warning");
      expect(await using(target, (db) => snapshot(db))).toEqual(backedUp);
      if (onCluster) {
        // Moved whole (the snapshot above: every row, ids and counts as they were), and laid out.
        await using(target, async (db) => {
          const placed = (await db.execute(
            sql`select table_name::text as name, citus_table_type as type from citus_tables where table_name::text in ('supporters', 'donations', 'organizations')`,
          )) as unknown as { rows: { name: string; type: string }[] };
          expect(Object.fromEntries(placed.rows.map((row) => [row.name, row.type]))).toEqual({
            supporters: "distributed",
            donations: "distributed",
            organizations: "reference",
          });
        });
        const refused = await donata(["backup", "--out", path.join(scratch, "cluster.backup")], target.env);
        expect(refused.code).toBe(1);
        expect(refused.stderr).toContain("donata backup cannot back up a Citus cluster");
      }
      if (kind === "pglite") {
        const entries = await readdir(target.dataDir);
        expect(entries).toContain("PG_VERSION");
        expect(entries).not.toContain("backups");
        // The key file is the one put there before the restore, not one from the backup.
        expect(entries.filter((name) => !/^(PG_VERSION|base|global|pg_.*|postgresql.*\.conf)$/.test(name))).toEqual([
          KEY_FILE_NAME,
        ]);
      }
      // It starts as a server would: migrations (none pending) run, the data is there.
      await using(target, async (db, database) => {
        await database.migrate();
        expect(await count(db, supporters)).toBe(backedUp.supporters);
        // Exact totals and ids go on from where they were (on a cluster too): the organization's
        // supporters total is its row count, before and after a new supporter, whose id is past the last.
        const total = async () =>
          Number(
            (
              await db
                .select({ n: collectionCounts.count })
                .from(collectionCounts)
                .where(
                  and(
                    eq(collectionCounts.organizationId, organizationId),
                    eq(collectionCounts.collection, "supporters"),
                  ),
                )
            )[0]?.n ?? 0,
          );
        const rows = async () =>
          Number(
            (
              await db
                .select({ n: sql<string>`count(*)` })
                .from(supporters)
                .where(eq(supporters.organizationId, organizationId))
            )[0]?.n,
          );
        const before = await rows();
        expect(before).toBeGreaterThan(0);
        expect(await total()).toBe(before);
        const added = await fakeSupporter(db, organizationId);
        expect(added.id).toBeGreaterThan(Math.max(...backedUp.supporterRows.map((row) => row.id)));
        expect(await total()).toBe(before + 1);
        expect(await rows()).toBe(before + 1);
      });
    },
    TEST_TIMEOUT,
  );

  it(
    "warns that the processor secrets cannot be decrypted when the target lacks the key (a spawned restore --json)",
    async () => {
      const target = await newPlace("bknokey", { migrate: false });
      const otherKey = keyHex();
      const result = await spawnDonata(
        ["restore", backupFile, "--json"],
        { ...target.env, DONATA_ENCRYPTION_KEY: otherKey },
        { children },
      );
      expect(result.code, result.stderr).toBe(0);
      const json = JSON.parse(result.stdout);
      expect(json).toMatchObject({ restored: true, pending_migrations: 0, manifest: { database: kind } });
      expect(json.warnings).toEqual([
        `the 1 processor account(s) in this backup have secrets encrypted with the key ${keyIdOf(sourceKey)}, ` +
          `but DONATA_ENCRYPTION_KEY holds the key ${keyIdOf(otherKey)}: they cannot be decrypted. Before starting, copy the ` +
          `encryption.key of the backed-up DATA_DIR (fingerprint ${keyIdOf(sourceKey)}) to ${path.join(target.dataDir, KEY_FILE_NAME)} ` +
          "or set DONATA_ENCRYPTION_KEY to that key; without it, enter the Stripe keys again (admin panel → Payment settings).",
      ]);
      expect(await using(target, (db) => count(db, supporters))).toBe(backedUp.supporters);
      // The source's key file is not in the backup.
      if (kind === "pglite") expect(existsSync(path.join(target.dataDir, KEY_FILE_NAME))).toBe(false);
    },
    TEST_TIMEOUT,
  );

  it(
    "takes a consistent backup while the same database serves writes",
    async () => {
      const place = await newPlace("bklive", { migrate: true });
      const file = path.join(scratch, `live-${unique(6)}.backup`);
      const written = await using(place, async (db, database) => {
        const tenant = await fakeTenant(db);
        const campaign = await fakeCampaign(db, tenant.organizationId);
        let stop = false;
        let pairs = 0;
        // Each supporter and its donation in one transaction: a backup holds both or neither.
        const writer = (async () => {
          while (!stop) {
            await db.transaction(async (tx) => {
              const supporter = await fakeSupporter(tx as unknown as Db, tenant.organizationId);
              await fakeDonation(tx as unknown as Db, tenant.organizationId, {
                supporterId: supporter.id,
                campaignId: campaign.id,
              });
            });
            pairs++;
            // PGlite answers without I/O: let timers and the backup's gzip run between writes, as requests would.
            await new Promise((resolve) => setImmediate(resolve));
          }
        })();
        while (pairs < 3) await new Promise((resolve) => setTimeout(resolve, 20));
        await createBackup({ config: loadConfig(place.env), database }, file);
        stop = true;
        await writer;
        return pairs;
      });
      const target = await newPlace("bklivedst", { migrate: false });
      const restored = await donata(["restore", file], target.env);
      expect(restored, restored.stderr).toMatchObject({ code: 0 });
      await using(target, async (db) => {
        const supportersCount = await count(db, supporters);
        expect(supportersCount).toBeGreaterThanOrEqual(3);
        expect(supportersCount).toBeLessThanOrEqual(written);
        expect(await count(db, donations)).toBe(supportersCount);
      });
    },
    TEST_TIMEOUT,
  );

  it(
    "refuses a file it cannot restore, and a target holding data, writing nothing",
    async () => {
      const bytes = await readFile(backupFile);
      const lines = bytes.toString("latin1").split("\n");
      const manifestText = lines[1] as string;
      const payload = bytes.subarray(Buffer.byteLength(`${lines[0]}\n${manifestText}\n`, "latin1"));
      // biome-ignore lint/suspicious/noExplicitAny: the manifest is edited as plain JSON
      const craft = async (name: string, edit: (manifest: Record<string, any>) => void) => {
        const manifest = JSON.parse(manifestText);
        edit(manifest);
        const file = path.join(scratch, `${name}-${unique(6)}.backup`);
        await writeFile(file, Buffer.concat([Buffer.from(`${lines[0]}\n${JSON.stringify(manifest)}\n`), payload]));
        return file;
      };
      const newer = await craft("newer", (manifest) => {
        manifest.schema.migrations += 1;
        manifest.schema.last_tag = "0099_future";
        manifest.schema.last_created_at += 1000;
      });
      const otherKind = await craft("other", (manifest) => {
        manifest.database = kind === "pglite" ? "postgres" : "pglite";
      });
      const truncated = path.join(scratch, `truncated-${unique(6)}.backup`);
      await writeFile(truncated, bytes.subarray(0, bytes.length - 1000));
      const damaged = path.join(scratch, `damaged-${unique(6)}.backup`);
      const flipped = Buffer.from(bytes);
      flipped[flipped.length - 10] = (flipped[flipped.length - 10] as number) ^ 0xff;
      await writeFile(damaged, flipped);
      const notBackup = path.join(scratch, "notes.txt");
      await writeFile(notBackup, "hello\n");

      const target = await newPlace("bkrefuse", { migrate: false });
      const cases: [string, string][] = [
        [
          newer,
          `this backup was made by a newer Donata (schema at 0099_future, ${codeSchemaVersion().migrations + 1} migrations; this one has ${codeSchemaVersion().migrations}, up to ${codeSchemaVersion().last.tag}): upgrade first`,
        ],
        [
          otherKind,
          kind === "pglite"
            ? "this backup is of a PostgreSQL database: restore it with DATABASE_URL set to an empty PostgreSQL database"
            : "this backup is of the embedded database (PGlite): restore it without DATABASE_URL, into an empty DATA_DIR",
        ],
        [
          truncated,
          `${truncated} is truncated or damaged: ${payload.length - 1000} bytes of data where the manifest says ${payload.length}; nothing was restored`,
        ],
        [damaged, `${damaged} is damaged: its data does not match its checksum; nothing was restored`],
        [notBackup, `${notBackup} is not a Donata backup (made by donata backup)`],
        [path.join(scratch, "missing.backup"), `cannot read ${path.join(scratch, "missing.backup")}: no such file`],
      ];
      for (const [file, message] of cases) {
        const result = await donata(["restore", file], target.env);
        expect(result).toEqual({ code: 1, stdout: "", stderr: `donata restore: ${message}\n` });
      }
      // Nothing was written: the directory was never created / the database has no tables.
      if (kind === "pglite") expect(existsSync(target.dataDir)).toBe(false);
      else {
        await using(target, async (db) => {
          const tables = await db.execute(
            sql`select count(*) as n from information_schema.tables where table_schema in ('public', 'drizzle') and table_type = 'BASE TABLE'`,
          );
          expect(Number((tables as unknown as { rows: { n: string }[] }).rows[0]?.n)).toBe(0);
        });
      }

      // A target that holds data is never restored into.
      const busy = await donata(["restore", backupFile], source.env);
      expect(busy.code).toBe(1);
      expect(busy.stderr).toEqual(
        kind === "pglite"
          ? `donata restore: DATA_DIR ${source.dataDir} is not empty; restore into a new directory, then point DATA_DIR at it\n`
          : expect.stringMatching(
              /^donata restore: the PostgreSQL database "\w+" on 127\.0\.0\.1:\d+ already has \d+ table\(s\); restore into a new empty database \(createdb\), then point DATABASE_URL at it\n$/,
            ),
      );

      const usage = await donata(["restore"], target.env);
      expect(usage).toMatchObject({
        code: 2,
        stderr: "donata restore: give the backup FILE to restore\nUsage: donata restore FILE [--json]\n",
      });

      // backup never replaces a file unless asked to.
      const before = await stat(backupFile);
      const again = await donata(["backup", "--out", backupFile], source.env);
      expect(again).toEqual({
        code: 1,
        stdout: "",
        stderr: `donata backup: ${backupFile} already exists: choose another name, or pass --force to replace it\n`,
      });
      expect((await stat(backupFile)).mtimeMs).toBe(before.mtimeMs);
      const forced = await donata(["backup", "--out", backupFile, "--force"], source.env);
      expect(forced.code, forced.stderr).toBe(0);
      expect((await readdir(path.dirname(backupFile))).sort()).toEqual(["manual.backup", "notes.txt"]);
    },
    TEST_TIMEOUT,
  );

  it(
    "takes periodic backups when due, keeps the last BACKUP_KEEP and leaves other files alone",
    async () => {
      const place = await newPlace("bkdaily", { migrate: true });
      const dir = path.join(place.dataDir, "backups");
      await mkdir(dir, { recursive: true });
      const start = Date.parse("2030-01-01T03:00:00Z");
      const foreign = ["notes.txt", "donata-latest.backup", "donata-20200101T000000Z.backup.bak", "my.backup"];
      for (const name of foreign) await writeFile(path.join(dir, name), "not Donata's\n");
      // Left by a periodic backup cut short (its temporary name): removed once it is an hour old.
      const leftover = path.join(dir, ".donata-20291231T030000Z.backup.0a1b2c3d.payload.partial");
      await writeFile(leftover, "half a backup");
      await utimes(leftover, new Date(start - 600_000), new Date(start - 600_000));
      const config = loadConfig({ ...place.env, BACKUP_KEEP: "3", BACKUP_INTERVAL: "24" });
      expect(config.backups).toEqual({ dir, keep: 3, intervalHours: 24 });
      expect(() => loadConfig({ BACKUP_INTERVAL: "0" })).toThrow(
        'BACKUP_INTERVAL must be an integer between 1 and 8784, got "0"',
      );
      expect(() => loadConfig({ BACKUP_KEEP: "-1" })).toThrow(
        'BACKUP_KEEP must be an integer between 0 and 10000, got "-1"',
      );
      expect(loadConfig({ DATA_DIR: "memory://", BACKUP_DIR: "./bk" }).backups.dir).toBe(path.resolve("bk"));
      const at = (hours: number) => new Date(start + hours * 3600_000);
      const ours = async () => (await readdir(dir)).filter((name) => !foreign.includes(name)).sort();
      await using(place, async (db, database) => {
        await fakeTenant(db);
        const context = { config, database };
        expect(await runPeriodicBackup(context, at(0))).toEqual({
          created: path.join(dir, "donata-20300101T030000Z.backup"),
          deleted: [],
        });
        expect(existsSync(leftover)).toBe(true);
        expect(await runPeriodicBackup(context, at(23))).toEqual({ created: undefined, deleted: [] });
        expect(existsSync(leftover)).toBe(false);
        await runPeriodicBackup(context, at(24));
        await runPeriodicBackup(context, at(49));
        expect(await ours()).toEqual([
          "donata-20300101T030000Z.backup",
          "donata-20300102T030000Z.backup",
          "donata-20300103T040000Z.backup",
        ]);
        expect(await runPeriodicBackup(context, at(73))).toEqual({
          created: path.join(dir, "donata-20300104T040000Z.backup"),
          deleted: [path.join(dir, "donata-20300101T030000Z.backup")],
        });
        // A smaller BACKUP_KEEP prunes at once, the oldest first.
        const fewer = { config: loadConfig({ ...place.env, BACKUP_KEEP: "1" }), database };
        expect(await runPeriodicBackup(fewer, at(74))).toEqual({
          created: undefined,
          deleted: [path.join(dir, "donata-20300102T030000Z.backup"), path.join(dir, "donata-20300103T040000Z.backup")],
        });
        expect(
          startPeriodicBackups({ config: loadConfig({ ...place.env, BACKUP_KEEP: "0" }), database }, { onError() {} }),
        ).toBe(undefined);
      });
      expect(await ours()).toEqual(["donata-20300104T040000Z.backup"]);
      for (const name of foreign) expect(await readFile(path.join(dir, name), "utf8")).toBe("not Donata's\n");
      // Backups inside DATA_DIR/backups are not in the next backup: the fourth is no bigger than the first would be twice.
      const sizes = await Promise.all((await ours()).map(async (name) => (await stat(path.join(dir, name))).size));
      const restoredDir = await newPlace("bkdailydst", { migrate: false });
      const restored = await donata(["restore", path.join(dir, "donata-20300104T040000Z.backup")], restoredDir.env);
      expect(restored, restored.stderr).toMatchObject({ code: 0 });
      if (kind === "pglite") expect(await readdir(restoredDir.dataDir)).not.toContain("backups");
      expect(sizes[0]).toBeLessThan(20 * 1024 * 1024);
      expect(await using(restoredDir, (db) => count(db, organizations))).toBe(1);
    },
    TEST_TIMEOUT,
  );
});
