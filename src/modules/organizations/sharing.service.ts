import QRCode from "qrcode";
import type { Scope } from "../../auth/scope.js";
import type { Db } from "../../db/client.js";
import { notFound } from "../../errors/app-error.js";
import { parseId } from "../../http/ids.js";
import { findCampaignRow } from "../campaigns/campaigns.repo.js";

/**
 * How a campaign is shared (panel → campaign): its donation page's address, a QR code of it (an SVG
 * drawn here, so the panel loads nothing) and the embed.js snippet for the charity's own site (docs/embed.md).
 * Null for a campaign without a slug: it has no page yet.
 */
export async function campaignSharing(
  db: Db,
  scope: Scope & { organizationSlug: string },
  rawId: string,
  baseUrl: string,
) {
  const campaign = await findCampaignRow(db, scope, parseId(rawId, "Campaign"));
  if (!campaign) throw notFound("Campaign");
  if (!campaign.slug) return null;
  const base = baseUrl.replace(/\/+$/, "");
  const url = `${base}/donate/${encodeURIComponent(scope.organizationSlug)}/${encodeURIComponent(campaign.slug)}`;
  const qrSvg = await QRCode.toString(url, {
    type: "svg",
    errorCorrectionLevel: "M",
    margin: 2,
    color: { dark: "#000000", light: "#ffffff" },
  });
  const attribute = (value: string) => value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
  const embedSnippet = `<script src="${attribute(`${base}/embed.js`)}" data-organization="${attribute(scope.organizationSlug)}" data-campaign="${attribute(campaign.slug)}" async></script>`;
  return { url, qr_svg: qrSvg, embed_snippet: embedSnippet };
}
