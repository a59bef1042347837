import { builder } from "../../graphql/builder.js";
import { authorize } from "../../graphql/context.js";
import {
  EMAIL_SETTINGS_LOCALES,
  type EmailSettingsWire,
  GIFT_NOTIFICATIONS,
  getEmailSettings,
  updateEmailSettings,
} from "./email-settings.service.js";

const EmailSettingsType = builder.objectRef<EmailSettingsWire>("EmailSettings").implement({
  description: "How the organization's emails look and where replies and gift notifications go",
  fields: (t) => ({
    email: t.exposeString("email", {
      nullable: true,
      description: "Reply-To of every message, and where gift notifications go",
    }),
    logo_url: t.exposeString("logo_url", { nullable: true, description: "Shown at the top of every message" }),
    locale: t.exposeString("locale", { description: EMAIL_SETTINGS_LOCALES.join(" or ") }),
    gift_notifications: t.exposeString("gift_notifications", {
      description: "off, each (one email per new gift) or daily (a digest)",
    }),
    update_date: t.exposeString("update_date"),
  }),
});

const EmailSettingsInput = builder.inputType("EmailSettingsInput", {
  fields: (t) => ({
    email: t.string({ description: "Blank or null: none (then gift notifications must be off)" }),
    logo_url: t.string({ description: "https:// (or http://) address, at most 2000 characters; blank: none" }),
    locale: t.string({ required: true, description: EMAIL_SETTINGS_LOCALES.join(" or ") }),
    gift_notifications: t.string({ required: true, description: GIFT_NOTIFICATIONS.join(", ") }),
  }),
});

builder.queryFields((t) => ({
  emailSettings: t.field({
    type: EmailSettingsType,
    description: "The organization's email settings (members only)",
    resolve: (_root, _args, context) => {
      authorize(context, "organization:read");
      return getEmailSettings(context.db, context.scope.organizationId);
    },
  }),
}));

builder.mutationFields((t) => ({
  updateEmailSettings: t.field({
    type: EmailSettingsType,
    description: "Saves the email settings (every field checked, problems by field); audited. Owners and admins only.",
    args: { input: t.arg({ type: EmailSettingsInput, required: true }) },
    resolve: (_root, { input }, context) => {
      authorize(context, "organization:manage");
      return updateEmailSettings(context.db, context.scope.organizationId, input, context.scope.origin);
    },
  }),
}));
