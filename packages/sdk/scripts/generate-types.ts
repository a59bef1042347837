/**
 * Writes src/generated/openapi-types.ts from the server's OpenAPI document (built in memory from
 * `buildApp`, so it always matches the routes' schemas). test/sdk.test.ts regenerates it and fails on
 * drift. Run with `npx tsx packages/sdk/scripts/generate-types.ts`.
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

type Schema = { [keyword: string]: unknown };
interface Parameter {
  name: string;
  in: "query" | "path" | "header" | "cookie";
  required?: boolean;
  description?: string;
  schema?: Schema;
}
interface Operation {
  operationId?: string;
  summary?: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: Schema }> }>;
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

export const OUTPUT_FILE = fileURLToPath(new URL("../src/generated/openapi-types.ts", import.meta.url));
const REPOSITORY_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const HTTP_METHODS = ["get", "put", "post", "delete", "patch"];

const propertyKey = (name: string) => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name));
const pascalCase = (name: string) =>
  name.replace(/(^|[^A-Za-z0-9])([A-Za-z0-9])/g, (_match, _separator, letter: string) => letter.toUpperCase());

function docComment(text: unknown, indent: string): string {
  if (typeof text !== "string" || text.trim() === "") return "";
  return `${indent}/** ${text.replace(/\*\//g, "*\\/").replace(/\s*\n\s*/g, " ")} */\n`;
}

class TypeWriter {
  constructor(private readonly componentNames: Map<string, string>) {}

  type(schema: Schema | undefined, indent = ""): string {
    if (!schema || typeof schema !== "object") return "unknown";
    if (typeof schema.$ref === "string") {
      const name = this.componentNames.get(schema.$ref);
      if (!name) throw new Error(`unresolved $ref ${schema.$ref}`);
      return name;
    }
    if ("const" in schema) return JSON.stringify(schema.const);
    for (const keyword of ["anyOf", "oneOf"]) {
      const variants = schema[keyword];
      if (Array.isArray(variants)) return this.union(variants.map((variant) => this.type(variant, indent)));
    }
    if (Array.isArray(schema.allOf)) {
      return schema.allOf.map((part) => this.type(part, indent)).join(" & ") || "unknown";
    }
    const types = Array.isArray(schema.type) ? (schema.type as string[]) : schema.type ? [schema.type as string] : [];
    if (Array.isArray(schema.enum)) {
      const literals = schema.enum.map((value) => JSON.stringify(value));
      if (types.includes("null") && !schema.enum.includes(null)) literals.push("null");
      return this.union(literals);
    }
    if (types.length === 0) return schema.properties ? this.object(schema, indent) : "unknown";
    return this.union(types.map((type) => this.single(type, schema, indent)));
  }

  private single(type: string, schema: Schema, indent: string): string {
    switch (type) {
      case "string":
        return "string";
      case "integer":
      case "number":
        return "number";
      case "boolean":
        return "boolean";
      case "null":
        return "null";
      case "array": {
        const item = this.type(schema.items as Schema | undefined, indent);
        return /^[A-Za-z0-9_]+$/.test(item) ? `${item}[]` : `Array<${item}>`;
      }
      case "object":
        return this.object(schema, indent);
      default:
        return "unknown";
    }
  }

  object(schema: Schema, indent: string): string {
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    const required = new Set((schema.required ?? []) as string[]);
    const names = Object.keys(properties);
    if (names.length === 0) {
      const extra = schema.additionalProperties;
      if (extra === false) return "Record<string, never>";
      return `Record<string, ${extra && typeof extra === "object" ? this.type(extra as Schema, indent) : "unknown"}>`;
    }
    const inner = `${indent}  `;
    const lines = names.map((name) => {
      const property = properties[name] as Schema;
      const optional = required.has(name) ? "" : "?";
      return `${docComment(property.description, inner)}${inner}${propertyKey(name)}${optional}: ${this.type(property, inner)};\n`;
    });
    return `{\n${lines.join("")}${indent}}`;
  }

  private union(members: string[]): string {
    const unique = [...new Set(members)];
    return unique.length === 0 ? "never" : unique.join(" | ");
  }
}

function jsonSchemaOf(content: Record<string, { schema?: Schema }> | undefined): Schema | undefined {
  if (!content) return undefined;
  const json = Object.keys(content).find((type) => /json/.test(type));
  if (json) return content[json]?.schema;
  return Object.values(content)[0]?.schema;
}

function parametersType(writer: TypeWriter, parameters: Parameter[], location: Parameter["in"], indent: string) {
  const selected = parameters.filter((parameter) => parameter.in === location);
  if (selected.length === 0) return "Record<string, never>";
  const inner = `${indent}  `;
  const lines = selected.map((parameter) => {
    // A parameter with a default is filled in by the server, so a client may leave it out.
    const optional = parameter.required && parameter.schema?.default === undefined ? "" : "?";
    return `${docComment(parameter.description, inner)}${inner}${propertyKey(parameter.name)}${optional}: ${writer.type(parameter.schema, inner)};\n`;
  });
  return `{\n${lines.join("")}${indent}}`;
}

/** TypeScript declarations of every operation of the document: parameters, body and responses. */
export function generateTypes(document: OpenApiDocument): string {
  const schemas = document.components?.schemas ?? {};
  const componentNames = new Map<string, string>();
  for (const [key, schema] of Object.entries(schemas)) {
    const title = typeof schema.title === "string" ? schema.title : key;
    componentNames.set(`#/components/schemas/${key}`, pascalCase(title));
  }
  const writer = new TypeWriter(componentNames);
  const out: string[] = [
    "// Generated by packages/sdk/scripts/generate-types.ts from the server's OpenAPI document. Do not edit;",
    "// run `npx tsx packages/sdk/scripts/generate-types.ts` after changing a route's schema.",
    "",
  ];
  for (const [key, schema] of Object.entries(schemas)) {
    const name = componentNames.get(`#/components/schemas/${key}`) as string;
    out.push(`${docComment(schema.description, "")}export type ${name} = ${writer.type(schema)};`, "");
  }

  const operations: { id: string; text: string }[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (!operation?.operationId) continue;
      const parameters = operation.parameters ?? [];
      const indent = "    ";
      const body = jsonSchemaOf(operation.requestBody?.content);
      const responses = Object.entries(operation.responses ?? {}).map(
        ([status, response]) =>
          `${docComment(response.description, "      ")}      ${/^\d+$/.test(status) ? status : JSON.stringify(status)}: ${writer.type(jsonSchemaOf(response.content), "      ")};\n`,
      );
      operations.push({
        id: operation.operationId,
        text: [
          docComment(`${method.toUpperCase()} ${path}${operation.summary ? `: ${operation.summary}` : ""}`, "  "),
          `  ${propertyKey(operation.operationId)}: {\n`,
          `    method: ${JSON.stringify(method.toUpperCase())};\n`,
          `    path: ${JSON.stringify(path)};\n`,
          `    pathParams: ${parametersType(writer, parameters, "path", indent)};\n`,
          `    query: ${parametersType(writer, parameters, "query", indent)};\n`,
          `    headers: ${parametersType(writer, parameters, "header", indent)};\n`,
          `    body: ${body ? writer.type(body, indent) : "never"};\n`,
          `    responses: {\n${responses.join("")}    };\n`,
          "  };\n",
        ].join(""),
      });
    }
  }
  operations.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  out.push("export interface Operations {", ...operations.map((operation) => operation.text.trimEnd()), "}", "");
  return format(out.join("\n"));
}

/** Formats as the repository's Biome configuration would, so the committed file passes `npm run lint`. */
function format(source: string): string {
  const biome = fileURLToPath(new URL("node_modules/.bin/biome", pathToFileURL(REPOSITORY_ROOT)));
  const result = spawnSync(biome, ["format", `--stdin-file-path=${OUTPUT_FILE}`], {
    cwd: REPOSITORY_ROOT,
    input: source,
    encoding: "utf8",
  });
  if (result.status !== 0) throw new Error(`biome format failed: ${result.stderr}`);
  return result.stdout;
}

/** The OpenAPI document of the server as it is now: the app is built in memory and never listens. */
export async function serverOpenApiDocument(): Promise<OpenApiDocument> {
  const { buildApp } = await import("../../../src/app.js");
  const { loadConfig } = await import("../../../src/config.js");
  const { openDatabase } = await import("../../../src/db/client.js");
  const database = await openDatabase({ databaseUrl: undefined, dataDir: "memory://" });
  try {
    await database.migrate();
    const app = await buildApp({ config: loadConfig({ LOG_LEVEL: "silent" }), database });
    try {
      await app.ready();
      return app.swagger() as unknown as OpenApiDocument;
    } finally {
      await app.close();
    }
  } finally {
    await database.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const source = generateTypes(await serverOpenApiDocument());
  writeFileSync(OUTPUT_FILE, source);
  console.log(`wrote ${OUTPUT_FILE}`);
}
