import { lexicographicSortSchema, printSchema } from "graphql";
import { builder } from "./builder.js";
import "../modules/campaigns/campaigns.graphql.js";
import "../modules/supporters/supporters.graphql.js";
import "../modules/donations/donations.graphql.js";
import "../modules/payments/payments.graphql.js";
import "../modules/checkouts/checkouts.graphql.js";
import "../modules/organizations/organizations.graphql.js";
import "../modules/supporters/supporter-export.graphql.js";
import "../modules/supporters/supporter-notes.graphql.js";
import "../modules/segments/segments.graphql.js";
import "../modules/supporters/supporter-duplicates.graphql.js";
import "../modules/applications/applications.graphql.js";
import "../modules/payments/payment-actions.graphql.js";
import "../modules/donations/donation-actions.graphql.js";
import "../modules/donations/recurring-changes.graphql.js";
import "../modules/giving/card-testing.graphql.js";
import "../modules/dashboard/dashboard.graphql.js";
import "../modules/retention/retention.graphql.js";
import "../modules/supporters/supporter-merges.graphql.js";
import "../modules/members/members.graphql.js";
import "../modules/organizations/payment-settings.graphql.js";
import "../modules/audit/audit.graphql.js";
import "../modules/webhooks/webhooks.graphql.js";
import "../email/outbox.graphql.js";
import "../modules/organizations/email-settings.graphql.js";
import "../modules/legal-profile/legal-profile.graphql.js";
import "../modules/receipts/receipts.graphql.js";
import "../modules/users/users.graphql.js";
import "../modules/imports/imports.graphql.js";

export const schema = lexicographicSortSchema(builder.toSchema());

/** The committed src/graphql/schema.graphql; a test fails when it drifts from the code. */
export function printedSchema(): string {
  return `${printSchema(schema)}\n`;
}
