import { readFileSync } from "node:fs";
import { and, eq } from "drizzle-orm";
import Handlebars from "handlebars";
import mjml2html from "mjml";
import type { Config } from "../config.js";
import type { Executor } from "../db/client.js";
import { organizations, supporters } from "../db/schema.js";
import { LOCALES, type Locale, localeOr } from "../i18n/locales.js";
import { type MessageValues, t } from "../i18n/messages.js";
import { formatMoney } from "../payments/money.js";
import type { EmailKind, OutboxRow } from "./outbox.repo.js";

/** The languages a message can be written in: the product's (src/i18n/locales.ts). */
export const EMAIL_LOCALES = LOCALES;
export type EmailLocale = Locale;

/** What every message's model carries: who sends it and in which language. */
export interface BaseModel {
  locale: EmailLocale;
  /**
   * Who reads it, for the footer: donors (the default), the organization itself (notifications), whom
   * a tribute gift was told to, or a member about their own account.
   */
  audience?: "organization" | "tribute_recipient" | "member";
  organization: {
    id: number;
    name: string;
    slug: string;
    email: string | null;
    logo_url: string | null;
    time_zone: string;
  };
}

/** What loaders may need beyond the database: public URLs are built from the base URL. */
export interface RenderDeps {
  baseUrl: string;
  /** The admin panel's origin (AUTH_URL: the panel is served where its users sign in). */
  adminUrl: string;
  /** The bare From address (MAIL_FROM); the organization's name is its display name. */
  mailFrom: string;
}

export const renderDepsOf = (config: Pick<Config, "baseUrl" | "authUrl" | "mailFrom">): RenderDeps => ({
  baseUrl: config.baseUrl,
  adminUrl: config.authUrl,
  mailFrom: config.mailFrom,
});

/**
 * A one-time link a message carries (a donor portal sign-in, a password reset). The message is
 * stored, rendered and shown in the Outbox with the placeholder token; each delivery attempt mints a
 * token (only its hash is stored) and puts it in the copy handed to the SMTP server, and nowhere
 * else (src/jobs/email.job.ts), so no copy kept in the outbox is a way in.
 */
export interface DeliveryLink {
  /** What a stored message holds where the token goes: it opens nothing. */
  placeholder: string;
  /** Every token of this kind in a text (the placeholder included), for the Outbox to blank. */
  tokens: RegExp;
  /**
   * Without SMTP a captured message is the only copy: true keeps its link usable there (the Outbox
   * shows it to owners and admins); false keeps the placeholder, and no token is minted at all.
   */
  capturedCopyKeepsLink: boolean;
  /** A token for this attempt, for the message's recipient; null: the link is nobody's any more (cancelled). */
  mint(tx: Executor, row: OutboxRow): Promise<string | null>;
}

/**
 * One message kind: how its model is read when the message is delivered (null: nothing to send any
 * more, e.g. the supporter was erased) and a sample model for the panel's preview.
 */
export interface EmailMessage<Model extends BaseModel = BaseModel> {
  kind: EmailKind;
  /** The one-time link the message carries, rendered with its placeholder and minted at delivery. */
  link?: DeliveryLink;
  load(tx: Executor, row: OutboxRow, deps: RenderDeps): Promise<Model | null>;
  sample(base: BaseModel, deps: RenderDeps): Model;
}

export interface RenderedEmail {
  subject: string;
  html: string;
  text: string;
  /** From, Reply-To, Message-ID, Auto-Submitted…: what is sent, and shown in the Outbox. */
  headers: Record<string, string>;
}

const TEMPLATES = new URL("./templates/", import.meta.url);
const compiled = new Map<string, HandlebarsTemplateDelegate>();

/**
 * A message of the catalog's `email` part (src/i18n/catalogs/), its ICU arguments filled from
 * `params`, then from the model's own top-level values; `{organization}` is the sender's name.
 */
export function translate(locale: Locale, key: string, params: Record<string, unknown>, model: unknown): string {
  const values: MessageValues = {};
  if (model && typeof model === "object") {
    for (const [name, value] of Object.entries(model)) {
      if (typeof value === "string" || typeof value === "number") values[name] = value;
    }
    const organization = (model as Partial<BaseModel>).organization;
    if (organization) values.organization = organization.name;
  }
  for (const [name, value] of Object.entries(params)) {
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") values[name] = value;
  }
  return t(locale, `email.${key}`, values);
}

type HelperOptions = { hash: Record<string, unknown>; data: { root: BaseModel } };

function engine(escapesHtml: boolean) {
  const hb = Handlebars.create();
  hb.registerHelper("t", (key: string, options: HelperOptions) =>
    translate(options.data.root.locale, key, options.hash, options.data.root),
  );
  hb.registerHelper("money", (amount: unknown, currency: unknown, options: HelperOptions) =>
    typeof amount === "number" && typeof currency === "string"
      ? formatMoney(amount, currency, options.data.root.locale)
      : "",
  );
  hb.registerHelper("date", (value: unknown, options: HelperOptions) => {
    if (typeof value !== "string" && !(value instanceof Date)) return "";
    const date = new Date(value);
    if (Number.isNaN(date.getTime())) return "";
    return new Intl.DateTimeFormat(options.data.root.locale, {
      dateStyle: "long",
      timeZone: options.data.root.organization.time_zone,
    }).format(date);
  });
  hb.registerHelper("eq", (a: unknown, b: unknown) => a === b);
  return { hb, escapesHtml };
}

const html = engine(true);
const text = engine(false);

function template(file: string): HandlebarsTemplateDelegate {
  let found = compiled.get(file);
  if (!found) {
    const source = readFileSync(new URL(file, TEMPLATES), "utf8");
    const { hb, escapesHtml } = file.endsWith(".txt") ? text : html;
    found = hb.compile(source, { noEscape: !escapesHtml, strict: false });
    compiled.set(file, found);
  }
  return found;
}

/** Renders a kind's templates over its model: subject from the catalog, MJML → HTML, and the text part. */
export async function renderEmail(
  kind: EmailKind,
  model: BaseModel,
  deps: RenderDeps,
  envelope: { messageId: string },
): Promise<RenderedEmail> {
  const subject = translate(model.locale, `${kind}.subject`, {}, model);
  const body = template(`${kind}.mjml`)(model, { data: { root: model } });
  const mjml = template("layout.mjml")({ ...model, subject, body }, { data: { root: model } });
  // No web fonts: a message loads nothing from third parties (fonts: {} keeps MJML from linking Google Fonts).
  const result = await mjml2html(mjml, { validationLevel: "strict", keepComments: false, fonts: {} });
  if (result.errors.length > 0) {
    throw new Error(`template ${kind}.mjml: ${result.errors.map((error) => error.formattedMessage).join("; ")}`);
  }
  const plain = template(`${kind}.txt`)(model, { data: { root: model } });
  const footer = template("layout.txt")({ ...model, subject, body: plain.trim() }, { data: { root: model } });
  const name = model.organization.name.replace(/["\\\r\n]/g, "");
  return {
    subject,
    html: result.html,
    text: footer,
    headers: {
      From: `"${name}" <${deps.mailFrom}>`,
      ...(model.organization.email ? { "Reply-To": model.organization.email } : {}),
      "Message-ID": envelope.messageId,
      "Auto-Submitted": "auto-generated",
      "X-Donata-Message": kind,
    },
  };
}

/**
 * The sender's part of every model, read once per message. A message to a donor (`donorId`) is
 * written in the language they gave in (supporters.locale), else in the organization's.
 */
export async function loadBaseModel(
  tx: Executor,
  organizationId: number,
  donorId: number | null = null,
): Promise<BaseModel | null> {
  const [row] = await tx
    .select({
      id: organizations.id,
      name: organizations.name,
      slug: organizations.slug,
      email: organizations.email,
      logoUrl: organizations.logoUrl,
      locale: organizations.locale,
      timeZone: organizations.timeZone,
    })
    .from(organizations)
    .where(eq(organizations.id, organizationId));
  if (!row) return null;
  return {
    locale: localeOr(
      donorId === null ? row.locale : await donorLocale(tx, organizationId, donorId),
      localeOr(row.locale),
    ),
    organization: {
      id: row.id,
      name: row.name,
      slug: row.slug,
      email: row.email,
      logo_url: row.logoUrl,
      time_zone: row.timeZone,
    },
  };
}

async function donorLocale(tx: Executor, organizationId: number, supporterId: number) {
  const [row] = await tx
    .select({ locale: supporters.locale })
    .from(supporters)
    .where(and(eq(supporters.organizationId, organizationId), eq(supporters.id, supporterId)));
  return row?.locale ?? null;
}

/** The Message-ID of an outbox message: stable across retries, so a receiver can tell a resend. */
export function messageIdOf(row: Pick<OutboxRow, "organizationId" | "id">, baseUrl: string): string {
  return `<outbox.${row.organizationId}.${row.id}@${new URL(baseUrl).hostname}>`;
}

/** The message module of a kind (src/email/messages/<kind>.ts, listed in messages/index.ts). */
export async function messageOf(kind: EmailKind): Promise<EmailMessage> {
  // Imported here, not at the top: the message modules import this one for its types and helpers.
  const { MESSAGES } = await import("./messages/index.js");
  const found = MESSAGES[kind] as EmailMessage | undefined;
  if (!found) throw new Error(`no message module for kind "${kind}"`);
  return found;
}

/** Reads an outbox message's model and renders it; null when there is nothing to send any more. */
export async function renderOutboxMessage(tx: Executor, row: OutboxRow, deps: RenderDeps) {
  const message = await messageOf(row.kind as EmailKind);
  const model = await message.load(tx, row, deps);
  if (!model) return null;
  return renderEmail(row.kind as EmailKind, model, deps, { messageId: messageIdOf(row, deps.baseUrl) });
}

/** A kind rendered over its sample model, with the organization's own name, logo and reply-to (the panel's preview). */
export async function renderSample(
  tx: Executor,
  organizationId: number,
  kind: EmailKind,
  locale: EmailLocale | undefined,
  deps: RenderDeps,
) {
  const base = await loadBaseModel(tx, organizationId);
  if (!base) return null;
  const message = await messageOf(kind);
  const model = message.sample(locale ? { ...base, locale } : base, deps);
  return renderEmail(kind, model, deps, { messageId: `<preview@${new URL(deps.baseUrl).hostname}>` });
}
