import { Type } from "typebox";

/** The longest id of another platform an import keeps (src/modules/imports/import-rows.ts checks the same). */
export const EXTERNAL_ID_MAX_LENGTH = 200;

/** A record's id on the platform it was imported from: set by the import, read-only on the API. */
export const ExternalId = (resource: "supporter" | "donation" | "payment") =>
  Type.String({
    description: `The ${resource}'s id on the platform it was imported from (docs/import.md), unique in the organization; null when it was made here. Read-only: the import sets it`,
  });

/** The list filter on it: an exact match, as an integrator syncing another system looks a record up. */
export const ExternalIdFilter = Type.String({
  minLength: 1,
  maxLength: EXTERNAL_ID_MAX_LENGTH,
  description: "Exact external id (the id on the platform the record was imported from)",
});
