import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { and, eq } from "drizzle-orm";
import fc from "fast-check";
import {
  buildSchema,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLOutputType,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
} from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PERMISSIONS } from "../src/auth/permissions.js";
import { loadConfig } from "../src/config.js";
import { events } from "../src/db/schema.js";
import { systemOrigin } from "../src/events/origin.js";
import { withEvents } from "../src/events/record-event.js";
import { issuePaymentReceipt } from "../src/modules/receipts/receipts.service.js";
import { createSupporter } from "../src/modules/supporters/supporters.service.js";
import { createUser } from "../src/modules/users/users.service.js";
import { createWebhookEndpoint } from "../src/modules/webhooks/webhooks.service.js";
import { loadSecretBox } from "../src/secrets/secret-box.js";
import { fakeAppToken, fakeCampaign, fakeCompletedCheckout, fakeTenant, type Tenant } from "./helpers/factories.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

/**
 * Fuzz test (issue 11): requests built by fast-check from the served OpenAPI document and from the
 * GraphQL schema, with wrong types, huge and non-finite numbers, unicode, NUL, long strings,
 * repeated parameters, deep nesting. No answer may be a 5xx, and every error must be a problem
 * body (REST) or the GraphQL error shape. FUZZ_RUNS sets the number of requests (nightly: 20000),
 * FUZZ_SEED the seed.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 3000);
const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
const REST_SHARE = 0.65;

interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  maxLength?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
}

interface Parameter {
  name: string;
  in: "query" | "path" | "header";
  schema: JsonSchema;
}

interface Operation {
  method: string;
  path: string;
  operationId: string;
  parameters: Parameter[];
  body?: JsonSchema;
}

interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  label: string;
}

type Actor = "full" | "limited" | "none" | "bad" | "owner";

// Strings that broke parsers somewhere: non-finite and non-decimal numbers, NUL, unicode, escapes.
const NASTY_STRINGS = [
  "",
  " ",
  "Infinity",
  "-Infinity",
  "NaN",
  "1e309",
  "-1e309",
  "0x10",
  "0b11",
  "1e3",
  "+5",
  " 5",
  "5 ",
  "-0",
  "1.5",
  "99999999999999999999999",
  "9007199254740993",
  "-9007199254740993",
  "true",
  "null",
  "undefined",
  "[]",
  "{}",
  "\u0000",
  "a\u0000b",
  "%",
  "%00",
  "'",
  '"',
  "\\",
  "--",
  "'; drop table donations; --",
  "\ud800",
  "\udfff",
  "\u202e",
  "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
  "İ",
  "ß",
  "\r\n",
  "<script>",
  "2026-02-30",
  "0000-01-01",
  "9999-12-31T23:59:60Z",
  "2026-01-01T00:00:00+24:00",
  "-create_date",
  "__proto__",
  "constructor",
];

const nastyString = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 20 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 4000 }).map((length) => "x".repeat(length)) },
  { weight: 1, arbitrary: fc.double().map(String) },
  { weight: 1, arbitrary: fc.bigInt().map(String) },
);

/** JSON values of every type, including those JSON.parse makes non-finite and deep nesting. */
const nastyJson: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "null",
    "true",
    "false",
    "0",
    "-0",
    "1e309",
    "-1e309",
    "1e-400",
    "9007199254740993",
    "12.345",
    "0.1",
    "[]",
    "{}",
    '"0x32"',
    '"5e1"',
    '"Infinity"',
    '"\\u0000"',
    '{"__proto__":{"polluted":1}}',
    '{"constructor":{"prototype":{}}}',
  ),
  nastyString.map((text) => JSON.stringify(text)),
  fc.integer({ min: 1, max: 5000 }).map((depth) => `${"[".repeat(depth)}${"]".repeat(depth)}`),
  fc.integer({ min: 1, max: 2000 }).map((depth) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`),
  fc.array(fc.integer(), { maxLength: 5 }).map((items) => JSON.stringify(items)),
);

function typesOf(schema: JsonSchema): string[] {
  return ([] as string[]).concat(schema.type ?? []);
}

/** A JSON value that fits the schema most of the time (so requests get past validation and reach the database). */
function validValue(schema: JsonSchema, ids: number[], depth = 0): fc.Arbitrary<unknown> {
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const choices: fc.Arbitrary<unknown>[] = [];
  for (const type of typesOf(schema)) {
    if (type === "null") choices.push(fc.constant(null));
    if (type === "integer") {
      const min = schema.minimum ?? -1000;
      const max = Math.min(schema.maximum ?? 1_000_000, Number.MAX_SAFE_INTEGER);
      choices.push(
        min >= 1
          ? fc.oneof(fc.constantFrom(...ids), fc.integer({ min, max: Math.min(max, 2 ** 31) }))
          : fc.integer({ min, max: Math.min(max, 2 ** 31) }),
      );
    }
    if (type === "number") {
      choices.push(
        fc.oneof(
          fc.integer({ min: 1, max: 100_000 }).map((cents) => cents / 100),
          fc.double({ noNaN: true, noDefaultInfinity: true }),
        ),
      );
    }
    if (type === "boolean") choices.push(fc.boolean());
    if (type === "string") {
      if (schema.format === "date-time")
        choices.push(fc.date({ noInvalidDate: true }).map((date) => date.toISOString()));
      else if (schema.format === "date") choices.push(fc.constantFrom("2026-03-01", "1990-12-31", "2026-02-29"));
      else if (schema.format === "email") choices.push(fc.emailAddress());
      else choices.push(fc.oneof(fc.string({ maxLength: schema.maxLength ?? 30 }), fc.constantFrom("2026-01-01", "a")));
    }
    if (type === "array") choices.push(fc.array(validValue(schema.items ?? {}, ids, depth + 1), { maxLength: 4 }));
    if (type === "object" && depth < 4) {
      const properties = schema.properties ?? {};
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, property] of Object.entries(properties)) record[name] = fuzzValue(property, ids, depth + 1);
      choices.push(fc.record(record, { requiredKeys: (schema.required ?? []).filter((name) => name in record) }));
    }
  }
  return choices.length > 0 ? fc.oneof(...choices) : fc.constant(null);
}

/** Mostly fitting values, sometimes the wrong type, a non-finite number, unicode or a deep nest. */
function fuzzValue(schema: JsonSchema, ids: number[], depth = 0): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 6, arbitrary: validValue(schema, ids, depth) },
    { weight: 1, arbitrary: nastyString },
    { weight: 1, arbitrary: nastyJson.map((json) => ({ raw: json })) },
    { weight: 1, arbitrary: fc.oneof(fc.boolean(), fc.double(), fc.constant(null), fc.constant([]), fc.constant({})) },
  );
}

/** JSON text of a fuzzed value; `{ raw }` splices JSON that JSON.stringify cannot write (1e309, deep nesting). */
function toJson(value: unknown): string {
  if (value !== null && typeof value === "object" && "raw" in value && Object.keys(value).length === 1) {
    return (value as { raw: string }).raw;
  }
  if (Array.isArray(value)) return `[${value.map(toJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.entries(value)
      .map(([key, item]) => `${JSON.stringify(key)}:${toJson(item)}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** A wire string for a query, path or header parameter. */
function wireString(schema: JsonSchema, ids: number[]): fc.Arbitrary<string> {
  return fc.oneof(
    {
      weight: 3,
      arbitrary: validValue(schema, ids).map((value) => (typeof value === "string" ? value : toJson(value))),
    },
    { weight: 2, arbitrary: nastyString },
  );
}

function operationsOf(document: { paths: Record<string, Record<string, Record<string, unknown>>> }): Operation[] {
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const content = (operation.requestBody as { content?: Record<string, { schema: JsonSchema }> } | undefined)
        ?.content;
      operations.push({
        method: method.toUpperCase(),
        path,
        operationId: String(operation.operationId ?? `${method} ${path}`),
        parameters: (operation.parameters as Parameter[] | undefined) ?? [],
        body: content?.["application/json"]?.schema,
      });
    }
  }
  return operations;
}

function restRequest(operation: Operation, context: { ids: number[]; slugs: Record<string, string[]> }) {
  const query = operation.parameters.filter((parameter) => parameter.in === "query");
  const pathParameters = operation.parameters.filter((parameter) => parameter.in === "path");
  const headers = operation.parameters.filter((parameter) => parameter.in === "header");
  const pair = fc.oneof(
    {
      weight: 8,
      arbitrary: query.length > 0 ? fc.constantFrom(...query.map((parameter) => parameter.name)) : fc.constant("x"),
    },
    { weight: 1, arbitrary: fc.constantFrom("x", "limit[]", "__proto__", "organization", "a\u0000") },
  );
  const queryArbitrary = fc.array(
    pair.chain((name) => {
      const schema = query.find((parameter) => parameter.name === name)?.schema ?? { type: "string" };
      return wireString(schema, context.ids).map((value) => [name, value] as const);
    }),
    { maxLength: 5 },
  );
  const pathArbitrary = fc.tuple(
    ...pathParameters.map((parameter) =>
      fc.oneof(
        {
          weight: 4,
          arbitrary: fc.constantFrom(
            ...(context.slugs[`${operation.operationId}.${parameter.name}`] ??
              context.slugs[parameter.name] ??
              context.ids.map(String)),
          ),
        },
        { weight: 2, arbitrary: nastyString },
      ),
    ),
  );
  const headerArbitrary = fc.tuple(
    ...headers.map(() =>
      fc.option(
        fc.oneof(fc.uuid(), nastyString).filter((value) => /^[\t\x20-\x7e]*$/.test(value) && value.trim() === value),
        { nil: undefined },
      ),
    ),
  );
  const bodyArbitrary = operation.body
    ? fc.oneof(
        { weight: 6, arbitrary: fuzzValue(operation.body, context.ids).map(toJson) },
        { weight: 1, arbitrary: nastyJson },
        { weight: 1, arbitrary: fc.constantFrom("", "{", '{"a":', "not json", "\u0000", '{"amount": 1e309}') },
      )
    : fc.option(nastyJson, { nil: undefined, freq: 8 });
  const contentType = fc.oneof(
    { weight: 8, arbitrary: fc.constant("application/json") },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "application/x-www-form-urlencoded",
        "text/plain",
        "application/json; charset=latin1",
        "multipart/form-data",
      ),
    },
  );
  return fc
    .record({ query: queryArbitrary, path: pathArbitrary, headers: headerArbitrary, body: bodyArbitrary, contentType })
    .map(({ query: pairs, path: values, headers: headerValues, body, contentType: type }): FuzzRequest => {
      let index = 0;
      const path = operation.path.replace(/\{[^}]+\}/g, () =>
        encodeURIComponent(Buffer.from(values[index++] ?? "").toString()),
      );
      const search = new URLSearchParams(pairs.map(([name, value]) => [name, value])).toString();
      const requestHeaders: Record<string, string> = {};
      headers.forEach((parameter, position) => {
        const value = headerValues[position];
        if (value !== undefined) requestHeaders[parameter.name] = value;
      });
      if (body !== undefined) requestHeaders["content-type"] = type;
      return {
        method: operation.method,
        path: search ? `${path}?${search}` : path,
        headers: requestHeaders,
        body,
        label: operation.operationId,
      };
    });
}

// GraphQL: operations built from the committed schema.
const gqlSchema = buildSchema(readFileSync(new URL("../src/graphql/schema.graphql", import.meta.url), "utf8"));

function gqlValue(type: GraphQLInputType, ids: number[], depth = 0): fc.Arbitrary<unknown> {
  if (isNonNullType(type)) return gqlValue(type.ofType, ids, depth);
  if (isListType(type)) return fc.array(gqlValue(type.ofType, ids, depth + 1), { maxLength: 3 });
  const valid = (() => {
    if (isEnumType(type)) return fc.constantFrom(...type.getValues().map((value) => value.value));
    if (isInputObjectType(type)) {
      if (depth > 3) return fc.constant({});
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const field of Object.values(type.getFields())) record[field.name] = gqlValue(field.type, ids, depth + 1);
      const required = Object.values(type.getFields())
        .filter((field) => isNonNullType(field.type))
        .map((field) => field.name);
      return fc.record(record, { requiredKeys: required });
    }
    switch (type.name) {
      case "Int":
        return fc.oneof(
          fc.constantFrom(...ids),
          fc.integer({ min: -10, max: 2000 }),
          fc.constantFrom(2147483647, -2147483648),
        );
      case "Float":
        return fc.oneof(
          fc.integer({ min: 1, max: 100_000 }).map((cents) => cents / 100),
          fc.double({ noNaN: true, noDefaultInfinity: true }),
        );
      case "Boolean":
        return fc.boolean();
      case "ID":
        return fc.oneof(fc.constantFrom(...ids.map(String)), nastyString);
      default:
        return fc.oneof(
          fc.string({ maxLength: 20 }),
          fc.constantFrom("2026-01-01", "-create_date", "OPEN", "done", "admin"),
        );
    }
  })();
  return fc.oneof(
    { weight: 6, arbitrary: valid },
    { weight: 1, arbitrary: nastyString },
    {
      weight: 1,
      arbitrary: fc.oneof(
        fc.double(),
        fc.boolean(),
        fc.constant(null),
        nastyJson.map((raw) => ({ raw })),
      ),
    },
  );
}

/** A GraphQL literal for a value (strings escaped as JSON, which GraphQL reads the same way). */
function gqlLiteral(value: unknown, type: GraphQLInputType): string {
  const named = getNamedType(type);
  if (value !== null && typeof value === "object" && "raw" in value) return String((value as { raw: string }).raw);
  if (Array.isArray(value)) return `[${value.map((item) => gqlLiteral(item, type)).join(", ")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.entries(value)
      .map(([key, item]) => {
        const field = isInputObjectType(named) ? named.getFields()[key] : undefined;
        return `${key}: ${gqlLiteral(item, field?.type ?? type)}`;
      })
      .join(", ")}}`;
  }
  if (isEnumType(named) && typeof value === "string" && /^[A-Za-z_]\w*$/.test(value)) return value;
  if (typeof value === "number" && !Number.isFinite(value)) return "1e309";
  return JSON.stringify(value) ?? "null";
}

function selectionOf(type: GraphQLOutputType, depth = 0): string {
  const named = getNamedType(type);
  if (isLeafType(named)) return "";
  if (!isObjectType(named) || depth > 2) return "{ __typename }";
  const fields = Object.values(named.getFields()).filter((field) =>
    field.args.every((arg) => !isNonNullType(arg.type)),
  );
  const parts = fields.map((field) => {
    const inner = selectionOf(field.type, depth + 1);
    return inner ? `${field.name} ${inner}` : field.name;
  });
  return `{ ${parts.join(" ")} }`;
}

function gqlTypeName(type: GraphQLInputType): string {
  return String(type);
}

function gqlRequest(kind: "query" | "mutation", field: GraphQLField<unknown, unknown>, ids: number[]) {
  const selection = selectionOf(field.type);
  return fc
    .record({
      useVariables: fc.boolean(),
      values: fc.tuple(
        ...field.args.map((arg: GraphQLArgument) =>
          isNonNullType(arg.type)
            ? gqlValue(arg.type, ids).map((value) => ({ present: true, value }))
            : fc
                .option(gqlValue(arg.type, ids), { nil: undefined })
                .map((value) => ({ present: value !== undefined, value })),
        ),
      ),
    })
    .map(({ useVariables, values }): FuzzRequest => {
      const args: string[] = [];
      const declarations: string[] = [];
      const variables: string[] = [];
      field.args.forEach((arg, index) => {
        const entry = values[index];
        if (!entry?.present) return;
        if (useVariables) {
          declarations.push(`$${arg.name}: ${gqlTypeName(arg.type)}`);
          args.push(`${arg.name}: $${arg.name}`);
          variables.push(`${JSON.stringify(arg.name)}: ${toJson(entry.value)}`);
        } else {
          args.push(`${arg.name}: ${gqlLiteral(entry.value, arg.type)}`);
        }
      });
      const head = declarations.length > 0 ? `${kind} (${declarations.join(", ")})` : kind;
      const call = args.length > 0 ? `${field.name}(${args.join(", ")})` : field.name;
      const query = `${head} { ${call} ${selection} }`;
      return {
        method: "POST",
        path: "/admin/graphql/",
        headers: { "content-type": "application/json" },
        body: `{"query": ${JSON.stringify(query)}, "variables": {${variables.join(", ")}}}`,
        label: `graphql ${kind} ${field.name}`,
      };
    });
}

/** Raw GraphQL requests: malformed bodies and variables, batched and GET forms. */
const gqlOddities = fc
  .oneof(
    nastyJson.map((body) => ({ body, label: "graphql raw body" })),
    fc
      .tuple(
        fc.constantFrom("{ campaigns { count } }", "query ($l: Int) { donations(limit: $l) { count } }"),
        nastyJson,
      )
      .map(([query, variables]) => ({
        body: `{"query": ${JSON.stringify(query)}, "variables": ${variables}}`,
        label: "graphql variables",
      })),
    fc.tuple(nastyString, nastyString).map(([query, operationName]) => ({
      body: JSON.stringify({ query, operationName }),
      label: "graphql garbage query",
    })),
  )
  .map(
    ({ body, label }): FuzzRequest => ({
      method: "POST",
      path: "/admin/graphql/",
      headers: { "content-type": "application/json" },
      body,
      label,
    }),
  );

/** node:http rather than fetch: a GET may carry a body too. */
function send(url: string, request: FuzzRequest, credentials: Record<string, string>) {
  return new Promise<{ status: number; type: string; text: string }>((resolve, reject) => {
    const headers: Record<string, string> = { ...request.headers, ...credentials };
    if (request.body !== undefined) headers["content-length"] = String(Buffer.byteLength(request.body));
    const outgoing = httpRequest(`${url}${request.path}`, { method: request.method, headers }, (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
      incoming.on("end", () =>
        resolve({
          status: incoming.statusCode ?? 0,
          type: String(incoming.headers["content-type"] ?? ""),
          text: Buffer.concat(chunks).toString(),
        }),
      );
      incoming.on("error", reject);
    });
    outgoing.on("error", reject);
    outgoing.end(request.body);
  });
}

function isProblem(body: unknown, status: number): boolean {
  const problem = body as Record<string, unknown> | null;
  return (
    problem !== null &&
    typeof problem === "object" &&
    typeof problem.type === "string" &&
    typeof problem.title === "string" &&
    typeof problem.detail === "string" &&
    typeof problem.code === "string" &&
    problem.status === status
  );
}

function isGraphQLAnswer(body: unknown): boolean {
  const answer = body as { data?: unknown; errors?: unknown } | null;
  if (answer === null || typeof answer !== "object" || !("data" in answer || "errors" in answer)) return false;
  if (answer.errors === undefined) return true;
  return (
    Array.isArray(answer.errors) &&
    answer.errors.length > 0 &&
    answer.errors.every(
      (error: { message?: unknown; extensions?: { code?: unknown } }) =>
        typeof error.message === "string" &&
        typeof error.extensions?.code === "string" &&
        !["internal_error", "INTERNAL_SERVER_ERROR"].includes(error.extensions.code as string),
    )
  );
}

describe("fuzz: the OpenAPI operations and the GraphQL schema", () => {
  let server: TestServer;
  let tenant: Tenant;
  let limited: string;
  let ownerCookie: string;
  let operations: Operation[];
  let ids: number[];
  let slugs: Record<string, string[]>;

  beforeAll(async () => {
    // Limits far above the fuzz's own pace, so its requests reach the code behind them; the
    // rate-limit and card-testing tests cover the limits themselves.
    const unlimited = "999999999/1s";
    server = await startTestServer({
      rateLimits: loadConfig({
        RATE_LIMIT_TOKEN: unlimited,
        RATE_LIMIT_SESSION: unlimited,
        RATE_LIMIT_IP: unlimited,
        RATE_LIMIT_INVALID_CREDENTIALS: unlimited,
      }).rateLimits,
      cardTesting: loadConfig({
        CHECKOUTS_PER_IP: "1000000",
        CARD_DECLINES_PER_IP: "100000",
        CHECKOUT_ATTEMPTS_PER_CHECKOUT: "1000",
        CARD_DECLINE_FLOOR_MS: "0",
      }).cardTesting,
    });
    const db = server.database.db;
    tenant = await fakeTenant(db);
    const campaign = await fakeCampaign(db, tenant.organizationId, {
      archiveDate: null,
      minAmount: 1,
      maxAmount: 10_000,
    });
    // Ids of this organization's records (sequences are shared with other test files on PostgreSQL).
    const recordIds = new Set<number>([campaign.id]);
    let receiptId = 0;
    for (let i = 0; i < 3; i++) {
      const gift = await fakeCompletedCheckout(db, tenant.organizationId);
      for (const record of Object.values(gift)) recordIds.add(record.id);
      // Its receipt, as payment.paid would issue it (the factory writes the paid payment directly).
      const receipt = await withEvents(db, (tx) =>
        issuePaymentReceipt(tx, { organizationId: tenant.organizationId, origin: systemOrigin() }, gift.payment),
      );
      if (receipt) receiptId = receipt.id;
    }
    limited = await fakeAppToken(db, tenant, ["campaigns:read", "donations:read"]);
    // A signed-in owner reaches the member-only GraphQL operations (members, applications).
    const email = `owner-${tenant.slug}@example.test`;
    await createUser(db, { email, password: "a long enough password", organization: tenant.slug, role: "owner" });
    const signIn = await fetch(`${server.url}/admin/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: "a long enough password" }),
    });
    ownerCookie =
      (signIn.headers.getSetCookie().find((line) => line.startsWith("donata_session=")) ?? "").split(";")[0] ?? "";
    ids = [...recordIds];
    // An event of this organization, for the event read (its ids are strings).
    const { body: supporter } = await createSupporter(
      db,
      { organizationId: tenant.organizationId, timeZone: "UTC" },
      {
        first_name: "Fuzz",
      },
    );
    const [event] = await db
      .select({ id: events.id })
      .from(events)
      .where(and(eq(events.organizationId, tenant.organizationId), eq(events.resourceId, supporter.id)));
    // Webhook endpoints: one the generated writes may change or delete, one only the reads name.
    const owner = {
      organizationId: tenant.organizationId,
      applicationId: tenant.applicationId,
      permissions: [...PERMISSIONS],
    };
    const webhookDeps = {
      secrets: loadSecretBox({ encryptionKey: server.config.encryptionKey, dataDir: server.config.dataDir }),
      destinations: { allowPrivateNetworks: false },
    };
    const endpointBody = { url: "https://93.184.215.14/hooks", event_types: ["supporter.created"] };
    const writable = (await createWebhookEndpoint(db, webhookDeps, owner, endpointBody)).body;
    const readable = (await createWebhookEndpoint(db, webhookDeps, owner, endpointBody)).body;
    ids.push(writable.id);
    // The readable one's id may equal another table's record id (sequences are per table): the
    // generated deletes, REST and GraphQL, never name it, so the deliveries read always finds it.
    ids = ids.filter((id) => id !== readable.id);
    slugs = {
      "retrieve_webhook_endpoint.id": [String(readable.id)],
      "list_webhook_deliveries.id": [String(readable.id)],
      "delete_webhook_endpoint.id": [String(writable.id)],
      "retrieve_issued_receipt.id": [String(receiptId)],
      organization: [tenant.slug],
      campaign: [campaign.slug as string],
      signature: ["x", "a".repeat(43)],
      "retrieve_event.id": [event?.id ?? "evt_missing"],
    };
    const document = (await server.get("/api/v1/openapi.json")).body;
    operations = operationsOf(document);
  });
  afterAll(() => server?.close());

  it(`answers ${RUNS} generated requests without a 5xx, every error a problem or a GraphQL error`, async () => {
    expect(operations.length).toBeGreaterThan(15);
    const actor = fc.oneof(
      { weight: 12, arbitrary: fc.constant<Actor>("full") },
      { weight: 1, arbitrary: fc.constantFrom<Actor>("limited", "none", "bad") },
    );
    const graphqlActor = fc.oneof(
      { weight: 3, arbitrary: actor },
      { weight: 1, arbitrary: fc.constant<Actor>("owner") },
    );
    const rest = fc.oneof(...operations.map((operation) => restRequest(operation, { ids, slugs })));
    const queries = Object.values(gqlSchema.getQueryType()?.getFields() ?? {}).map((field) =>
      gqlRequest("query", field, ids),
    );
    const mutations = Object.values(gqlSchema.getMutationType()?.getFields() ?? {}).map((field) =>
      gqlRequest("mutation", field, ids),
    );
    const graphql = fc.oneof(
      { weight: 5, arbitrary: fc.oneof(...queries) },
      { weight: 3, arbitrary: fc.oneof(...mutations) },
      { weight: 1, arbitrary: gqlOddities },
    );
    const restRuns = Math.round(RUNS * REST_SHARE);
    const requests = [
      ...fc.sample(fc.tuple(rest, actor), { seed: SEED, numRuns: restRuns }),
      ...fc.sample(fc.tuple(graphql, graphqlActor), { seed: SEED + 1, numRuns: RUNS - restRuns }),
    ];
    const credentials: Record<Actor, Record<string, string>> = {
      full: { authorization: `Bearer ${tenant.token}` },
      limited: { authorization: `Bearer ${limited}` },
      none: {},
      bad: { authorization: "Bearer dnt_at_not-a-real-token-0000000000" },
      owner: { cookie: ownerCookie, "x-donata-organization": tenant.slug },
    };

    const failures: string[] = [];
    const seen = new Set<string>();
    const succeeded = new Set<string>();
    for (const [request, who] of requests) {
      const response = await send(server.url, request, credentials[who]);
      const text = response.text;
      let body: unknown = null;
      try {
        body = JSON.parse(text);
      } catch {}
      const type = response.type;
      if (response.status < 300) succeeded.add(request.label);
      const isGraphQL = request.path.startsWith("/admin/graphql/");
      const isDocument = request.path.startsWith("/documents/");
      let problem: string | null = null;
      if (response.status >= 500) problem = `${response.status}`;
      // Refusals before GraphQL runs (a NUL anywhere in the request, a rate limit) are problem bodies.
      else if (isGraphQL && !isGraphQLAnswer(body) && !(response.status >= 400 && isProblem(body, response.status))) {
        problem = "not a GraphQL answer";
      } else if (!isGraphQL && response.status >= 400) {
        const html = isDocument && type.startsWith("text/html");
        if (!html && !(type.includes("application/problem+json") && isProblem(body, response.status))) {
          problem = "not a problem body";
        }
      }
      if (problem) {
        const key = `${request.label} ${problem}`;
        if (!seen.has(key)) {
          seen.add(key);
          failures.push(
            `${problem} [${who}] ${request.method} ${request.path} ${JSON.stringify(request.headers)} ${request.body?.slice(0, 300) ?? ""} → ${response.status} ${text.slice(0, 300)}`,
          );
        }
      }
    }
    expect(failures).toEqual([]);
    // The generator must also get past validation: every list and read operation answered a 2xx at least once.
    // (Documents are left out: their signed links cannot be guessed, which is the point.)
    const reads = operations
      .filter((operation) => operation.method === "GET" && !operation.path.startsWith("/documents/"))
      .map((operation) => operation.operationId);
    expect(reads.filter((label) => !succeeded.has(label))).toEqual([]);
    if (process.env.FUZZ_VERBOSE) console.log([...succeeded].sort().join("\n"));
  }, 600_000);
});
