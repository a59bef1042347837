import { type BaseModel, type EmailMessage, loadBaseModel } from "../render.js";

export interface WebhookDisabledModel extends BaseModel {
  application_name: string;
  endpoint_url: string;
  reason: string;
  /** The panel's Webhooks page, where a member sees the delivery log and the application's endpoints. */
  admin_url: string;
}

export const adminWebhooksUrl = (adminUrl: string, organizationSlug: string) =>
  `${adminUrl}/admin/o/${encodeURIComponent(organizationSlug)}/webhooks`;

/** To the organization's owners and admins: an application's webhook endpoint failed for 5 days and was disabled. */
export const message: EmailMessage<WebhookDisabledModel> = {
  kind: "webhook_disabled",
  async load(tx, row, deps) {
    const base = await loadBaseModel(tx, row.organizationId);
    const data = row.data as { application_name?: unknown; endpoint_url?: unknown; reason?: unknown };
    if (!base || typeof data.endpoint_url !== "string") return null;
    return {
      ...base,
      audience: "organization",
      application_name: String(data.application_name ?? ""),
      endpoint_url: data.endpoint_url,
      reason: String(data.reason ?? ""),
      admin_url: adminWebhooksUrl(deps.adminUrl, base.organization.slug),
    };
  },
  sample(base, deps) {
    return {
      ...base,
      audience: "organization",
      application_name: "CRM Sync",
      endpoint_url: "https://crm.example.org/donata/webhooks",
      reason: "Every delivery failed for 5 days (since 2026-03-01T09:00:00.000Z)",
      admin_url: adminWebhooksUrl(deps.adminUrl, base.organization.slug),
    };
  },
};
