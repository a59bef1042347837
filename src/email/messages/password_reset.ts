import { localeOr } from "../../i18n/locales.js";
import { SIGN_IN_TOKEN_PLACEHOLDER, SIGN_IN_TOKENS, signInLinkUrl } from "../../identity/one-time-links.service.js";
import {
  findResetRecipient,
  mintPasswordResetToken,
  PASSWORD_RESET_LINK_LIFETIME_SECONDS,
} from "../../identity/password-reset.service.js";
import { type BaseModel, type DeliveryLink, type EmailMessage, loadBaseModel } from "../render.js";

export interface PasswordResetModel extends BaseModel {
  /** The account's address. */
  email: string;
  /** The page that asks for the new password, with the placeholder token until it is delivered. */
  url: string;
  minutes: number;
}

type Data = { user_id?: unknown; next?: unknown };

/**
 * A reset link is never kept usable, not even in a captured copy: the Outbox of an organization is
 * read by its members, and the link would open a member's account to them.
 */
const resetLink: DeliveryLink = {
  placeholder: SIGN_IN_TOKEN_PLACEHOLDER,
  tokens: SIGN_IN_TOKENS,
  capturedCopyKeepsLink: false,
  mint: (tx, row) => mintPasswordResetToken(tx, (row.data as Data).user_id, row.toAddress),
};

/**
 * "Forgot your password?": a link to choose a new one, to a member, queued in their first
 * organization's outbox. In the user's language, else that organization's; cancelled when the
 * account is gone or uses another address by the time it is delivered.
 */
export const message: EmailMessage<PasswordResetModel> = {
  kind: "password_reset",
  link: resetLink,
  async load(tx, row, deps) {
    const data = row.data as Data;
    const recipient = await findResetRecipient(tx, data.user_id, row.toAddress);
    const base = await loadBaseModel(tx, row.organizationId);
    if (!recipient || !base) return null;
    const next = typeof data.next === "string" ? data.next : undefined;
    return {
      ...base,
      locale: localeOr(recipient.locale, base.locale),
      audience: "member",
      email: recipient.email,
      url: signInLinkUrl(deps.adminUrl, SIGN_IN_TOKEN_PLACEHOLDER, next),
      minutes: PASSWORD_RESET_LINK_LIFETIME_SECONDS / 60,
    };
  },
  sample(base, deps) {
    return {
      ...base,
      audience: "member",
      email: "ada@example.org",
      url: signInLinkUrl(deps.adminUrl, "sample"),
      minutes: PASSWORD_RESET_LINK_LIFETIME_SECONDS / 60,
    };
  },
};
