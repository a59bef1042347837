import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { IntlMessageFormat } from "intl-messageformat";
import { describe, expect, it } from "vitest";
import { EMAIL_KINDS } from "../src/email/outbox.repo.js";
import { ERROR_STATUS } from "../src/errors/error-codes.js";
import { DEFAULT_LOCALE, LOCALES } from "../src/i18n/locales.js";
import { flattenCatalog, readCatalog, t } from "../src/i18n/messages.js";
import { negotiateLocale } from "../src/i18n/negotiate.js";
import { ROOT } from "./helpers/cli.js";

/** The catalogs of words (src/i18n/catalogs/): complete in every language, all used, all well-formed. */

const catalogs = new Map(LOCALES.map((locale) => [locale, flattenCatalog(readCatalog(locale))]));
const english = catalogs.get(DEFAULT_LOCALE) as Map<string, string>;

// The ICU message's parsed elements (intl-messageformat's AST): literal 0, argument 1, number 2,
// date 3, time 4, select 5, plural 6, pound 7, tag 8.
type Element = { type: number; value?: string; options?: Record<string, { value: Element[] }>; children?: Element[] };

function argumentsOf(elements: Element[], into = new Set<string>()): Set<string> {
  for (const element of elements) {
    if (element.type >= 1 && element.type <= 6 && element.value) into.add(element.value);
    for (const option of Object.values(element.options ?? {})) argumentsOf(option.value, into);
    // A tag's words (<link>…{name}…</link>) read their arguments too.
    if (element.children) argumentsOf(element.children, into);
  }
  return into;
}

const ast = (locale: string, message: string) => new IntlMessageFormat(message, locale).getAst() as Element[];

function files(directory: string, pattern: RegExp): string[] {
  return readdirSync(path.join(ROOT, directory), { withFileTypes: true, recursive: true }).flatMap((entry) => {
    const full = path.join(entry.parentPath, entry.name);
    return entry.isFile() && pattern.test(entry.name) && !/\.test\.ts$/.test(entry.name) ? [full] : [];
  });
}

describe("the catalogs of words", () => {
  it("every language has exactly the keys English has", () => {
    for (const [locale, messages] of catalogs) {
      const missing = [...english.keys()].filter((key) => !messages.has(key));
      const extra = [...messages.keys()].filter((key) => !english.has(key));
      expect({ locale, missing, extra }).toEqual({ locale, missing: [], extra: [] });
    }
  });

  it("every message parses, and each translation takes the arguments English takes", () => {
    const wrong: string[] = [];
    for (const [locale, messages] of catalogs) {
      for (const [key, message] of messages) {
        const parsed = argumentsOf(ast(locale, message));
        const expected = argumentsOf(ast("en", english.get(key) as string));
        if ([...parsed].sort().join() !== [...expected].sort().join()) wrong.push(`${locale} ${key}: arguments`);
        // An apostrophe before a brace quotes it in ICU ("dell'{x}" prints "{x}"): every brace written must be an argument.
        const written = new Set([...message.matchAll(/\{\s*(\w+)/g)].map((match) => match[1]));
        for (const name of written)
          if (!parsed.has(name as string)) wrong.push(`${locale} ${key}: {${name}} is not read`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("the donation page's script gets plain {name} arguments only (it fills them itself)", () => {
    const complex = [...catalogs].flatMap(([locale, messages]) =>
      [...messages]
        .filter(([key]) => key.startsWith("donate.script."))
        .filter(([, message]) => ast(locale, message).some((element) => element.type > 1))
        .map(([key]) => `${locale} ${key}`),
    );
    expect(complex).toEqual([]);
  });

  it("has one message per error code, and no other", () => {
    const errors = [...english.keys()].filter((key) => key.startsWith("errors.")).map((key) => key.slice(7));
    expect(errors.sort()).toEqual(Object.keys(ERROR_STATUS).sort());
  });

  it("holds no key that nothing reads", () => {
    const code = [
      ...files("src", /\.ts$/),
      ...files("web", /\.(ts|tsx|js)$/).filter((file) => !file.includes("node_modules") && !file.includes("/dist/")),
    ].map((file) => ({ file, text: readFileSync(file, "utf8") }));
    const templates = files("src/email/templates", /\.(mjml|txt)$/).map((file) => readFileSync(file, "utf8"));
    const emailCode = code.filter(({ file }) => file.includes(`${path.sep}email${path.sep}`)).map(({ text }) => text);
    const donateScript = readFileSync(path.join(ROOT, "web/donate/donate.js"), "utf8");
    const all = code.map(({ text }) => text).join("\n");
    const quoted = (text: string, key: string) =>
      text.includes(`"${key}"`) || text.includes(`'${key}'`) || text.includes(`\`${key}\``);
    // Keys built in a template literal (`donate.fields.${field}`) count through their literal prefix.
    const prefixes = (text: string) => [...text.matchAll(/`([\w.]+)\$\{/g)].map((match) => match[1] as string);
    const codePrefixes = prefixes(all).filter((prefix) => prefix.split(".").length > 2);
    const emailPrefixes = emailCode.flatMap(prefixes).map((prefix) => `email.${prefix}`);
    const scriptPrefixes = prefixes(donateScript).map((prefix) => `donate.script.${prefix}`);
    const used = (key: string): boolean => {
      if (quoted(all, key)) return true;
      if (codePrefixes.some((prefix) => key.startsWith(prefix))) return true;
      if (key.startsWith("errors.")) return key.slice(7) in ERROR_STATUS;
      // A field problem's words: named by its code where a service finds the problem.
      if (key.startsWith("fields.")) return all.includes(`fieldProblem("${key.slice(7)}"`);
      if (key.startsWith("email.")) {
        const inner = key.slice(6);
        if (EMAIL_KINDS.some((kind) => inner === `${kind}.subject`)) return true;
        return (
          templates.some((text) => quoted(text, inner)) ||
          emailCode.some((text) => quoted(text, inner)) ||
          emailPrefixes.some((prefix) => key.startsWith(prefix))
        );
      }
      if (key.startsWith("donate.script.")) {
        const inner = key.slice(14);
        return quoted(donateScript, inner) || scriptPrefixes.some((prefix) => key.startsWith(prefix));
      }
      return false;
    };
    expect([...english.keys()].filter((key) => !used(key))).toEqual([]);
  });
});

describe("the language of a request", () => {
  it("is ?lang=, then the saved choice, then Accept-Language, then the organization's, then English", () => {
    expect(negotiateLocale({ query: "it", saved: "en", acceptLanguage: "en", fallback: "en" })).toBe("it");
    expect(negotiateLocale({ query: "xx", saved: "it", acceptLanguage: "en", fallback: "en" })).toBe("it");
    expect(negotiateLocale({ saved: "de", acceptLanguage: "it-IT,it;q=0.9,en;q=0.8", fallback: "en" })).toBe("it");
    expect(negotiateLocale({ acceptLanguage: "de-DE, it;q=0.5, en;q=0.4" })).toBe("it");
    expect(negotiateLocale({ acceptLanguage: "fr-FR, de", fallback: "it" })).toBe("it");
    expect(negotiateLocale({ acceptLanguage: "*;q=0", fallback: "it" })).toBe("it");
    expect(negotiateLocale({ acceptLanguage: "garbage;;;q=x", fallback: "it" })).toBe("it");
    expect(negotiateLocale({})).toBe("en");
  });

  it("formats plurals and numbers by the language's rules", () => {
    expect(t("en", "email.gift_digest.intro", { count: 1, day: "Monday" })).toMatch(/\b1\b/);
    expect(t("it", "donate.script.min", { amount: "5 €" })).toBe("La donazione minima è 5 €");
    expect(() => t("en", "no.such.key")).toThrow(/no message/);
  });
});
