import { describe, expect, it } from "vitest";
import { EVENT_TYPES } from "../src/events/catalog.js";
import { t } from "../src/i18n/messages.js";
import { AUDIT_ACTIONS } from "../web/admin/src/pages/audit-actions.js";

/** The audit log's "What" filter (web/admin/src/pages/audit-actions.ts) against the events catalog. */
describe("the audit log's groups of changes", () => {
  it("put every type of event in a group, and name only types the catalog has", () => {
    const grouped = new Set(AUDIT_ACTIONS.flatMap(([, , types]) => types));
    expect(EVENT_TYPES.filter((type) => !grouped.has(type))).toEqual([]);
    expect([...grouped].filter((type) => !(EVENT_TYPES as readonly string[]).includes(type))).toEqual([]);
  });

  it("have a stable English value and a label in each language", () => {
    expect(new Set(AUDIT_ACTIONS.map(([value]) => value)).size).toBe(AUDIT_ACTIONS.length);
    for (const [value, key] of AUDIT_ACTIONS) {
      expect(value).toMatch(/^[A-Z][a-z]+$/);
      for (const locale of ["en", "it"] as const) expect(t(locale, key)).toMatch(/^\p{Lu}/u);
    }
  });
});
