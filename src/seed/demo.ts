import { readFileSync } from "node:fs";
import sharp from "sharp";
import type { Config } from "../config.js";
import type { Database } from "../db/client.js";
import {
  createApplication,
  createInstallationToken,
  installApplication,
} from "../modules/applications/applications.service.js";
import { updateCampaign, uploadCampaignCover } from "../modules/campaigns/campaigns.service.js";
import { loadDocumentLinks } from "../modules/documents/document-links.js";
import { updateLegalProfile, uploadLogo } from "../modules/legal-profile/legal-profile.service.js";
import { updateOrganizationColumns } from "../modules/organizations/organizations.repo.js";
import {
  countOrganizations,
  createOrganization,
  requireOrganization,
} from "../modules/organizations/organizations.service.js";
import { sumPaidForCampaign } from "../modules/payments/payments.repo.js";
import { createUser } from "../modules/users/users.service.js";
import { busiestCampaign } from "./seed.repo.js";
import { seedOrganization } from "./seed.service.js";

export const DEMO_CAMPAIGN_SLUG = "school-kits";
export const DEMO_LOGIN = { email: "demo@donata.local", password: "donata-demo-2026" };

/** The showcase campaign's story (Markdown), as docs/screenshots/campaign-story-en.png shows it. */
const DEMO_STORY = `## Every child starts school ready to learn

In the villages around Lake Victoria, one family in three cannot afford the basics their children need for school. A child without a pen or an exercise book sits at the back of the class, and too often stops coming.

Since 2019 we have handed out **more than 12,000 school kits** with local teachers, who know which families need them most. Each kit holds:

- exercise books and a geometry set
- pens, pencils and a sharpener
- a sturdy backpack that lasts the whole year

This September we want to reach **every child in 40 schools**. Read how last year went in [our annual report](https://demo-foundation.example/annual-report).`;

/**
 * On an empty database, creates the demo organization, its owner, an installed demo
 * application and demo data, and returns what a newcomer needs to try it. Null otherwise.
 */
export async function bootstrapDemo(config: Config, database: Database): Promise<string[] | null> {
  const { db } = database;
  if ((await countOrganizations(db)) > 0) return null;
  await createOrganization(db, { slug: "demo", name: "Demo Foundation", currency: "EUR", timeZone: "UTC" });
  await createUser(db, { ...DEMO_LOGIN, organization: "demo", role: "owner" });
  const app = await createApplication(db, {
    name: "Demo Integration",
    applicationUrl: "http://localhost:4000/",
    callbackUrls: ["http://localhost:4000/callback"],
  });
  await installApplication(db, app.client_id, "demo");
  const counts = await seedOrganization(database, {
    organization: "demo",
    campaigns: 12,
    supporters: 400,
    checkouts: 1500,
    randomSeed: 42,
    // Dated up to now, so the dashboard's "this month" and the recent checkouts are alive.
    now: new Date(),
    links: await loadDocumentLinks(db, config.baseUrl),
  });
  const organization = await requireOrganization(db, "demo");
  // Donors' replies go here, and the organization hears of each new gift (captured without SMTP_URL).
  await updateOrganizationColumns(db, organization.id, {
    email: "hello@demo-foundation.example",
    giftNotifications: "each",
  });
  // Its legal identity, as an Italian third-sector foundation: receipts print it (docs/receipts.md).
  await updateLegalProfile(
    db,
    organization.id,
    {
      legal_name: "Demo Foundation ETS",
      legal_form: "Fondazione",
      address_line1: "Via dell’Esempio 1",
      postal_code: "20121",
      city: "Milano",
      province: "MI",
      country: "IT",
      tax_code: "97735020584",
      ets_status: "ets",
      runts_number: "123456",
      website: "https://demo-foundation.example",
      privacy_policy_url: "https://demo-foundation.example/privacy",
    },
    undefined,
  );
  // Its logo (web/demo/logo.svg drawn to PNG), uploaded as the panel does: pages, emails and receipts show it.
  const logo = await sharp(readFileSync(new URL("../../web/demo/logo.svg", import.meta.url)))
    .png()
    .toBuffer();
  await uploadLogo(db, organization.id, { bytes: logo, contentType: "image/png" }, config.baseUrl, undefined);
  // The showcase campaign is the seeded campaign with the most gifts, renamed: its page, the panel
  // and the dashboard show what it raised (one definition of "raised", docs/campaigns.md).
  const scope = { organizationId: organization.id, timeZone: organization.timeZone };
  const busiest = await busiestCampaign(db, organization.id);
  const raised = await sumPaidForCampaign(db, organization.id, busiest);
  await updateCampaign(db, scope, String(busiest), {
    title: "School kits for every child",
    slug: DEMO_CAMPAIGN_SLUG,
    // Ahead of what it raised, so the goal bar shows progress still to make.
    goal: Math.max(20000, Math.ceil((raised * 1.6) / 5000) * 5000),
    is_goal_enabled: true,
    has_one_off: true,
    has_subscription: true,
    allow_custom_amount: true,
    allow_custom_subscription_amount: true,
    default_amount: 25,
    default_subscription_amount: 10,
    min_amount: 5,
    max_amount: 5000,
    min_subscription_amount: 5,
    max_subscription_amount: 500,
    asks: [10, 25, 50, 100],
    asks_subscription: [5, 10, 20],
    shown_fields: ["first_name", "last_name", "email", "ssn", "address", "city", "postal_code", "country"],
    required_fields: ["first_name", "last_name", "email"],
    privacy_note: "We use your data only to process your gift and, if you agree, to keep you informed.",
    cost_example_amount: 12.5,
    cost_example_label: "school kit",
    tags: ["demo"],
    story: DEMO_STORY,
    ask_impacts: [
      { amount: 25, recurring: false, text: "buys a complete school kit" },
      { amount: 50, recurring: false, text: "kits for two brothers or sisters" },
      { amount: 100, recurring: false, text: "books for a whole classroom" },
    ],
  });
  // Its cover (web/demo/cover.svg drawn to PNG), uploaded as the campaign editor does.
  const cover = await sharp(readFileSync(new URL("../../web/demo/cover.svg", import.meta.url)))
    .png()
    .toBuffer();
  await uploadCampaignCover(db, scope, String(busiest), { bytes: cover, contentType: "image/png" }, config.baseUrl);
  const tokens = await createInstallationToken(db, config, app.client_id, "demo");
  return [
    "Demo data created (shown once; the client secret is stored only as a hash):",
    `  organization:  demo (${counts.campaigns} campaigns, ${counts.supporters} supporters, ${counts.checkouts} checkouts)`,
    `  login:         ${DEMO_LOGIN.email} / ${DEMO_LOGIN.password}`,
    `  client_id:     ${app.client_id}`,
    `  client_secret: ${app.client_secret}`,
    `  access_token:  ${tokens.access_token}  (valid ${tokens.expires_in} s)`,
    `  refresh_token: ${tokens.refresh_token}  (POST /oauth/token/ grant_type=refresh_token for a new pair)`,
    `  new pair:      npx donata token create --client-id ${app.client_id} --org demo  (also while the server runs)`,
    `  donate:        ${config.baseUrl}/donate/demo/${DEMO_CAMPAIGN_SLUG}  (sandbox test card 4242 4242 4242 4242)`,
    `  emails:        ${config.authUrl}/admin/o/demo/outbox  (${config.smtpUrl ? "sent through SMTP_URL" : "captured: no SMTP_URL"})`,
    `  donor portal:  ${config.baseUrl}/donor/demo/  (sign in with the email you give with)`,
    `  try:           curl -H "Authorization: Bearer ${tokens.access_token}" ${config.baseUrl}/api/v1/checkouts/?limit=2`,
  ];
}
