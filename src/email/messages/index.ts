import type { EmailKind } from "../outbox.repo.js";
import type { EmailMessage } from "../render.js";
import { message as bankTransfer } from "./bank_transfer.js";
import { message as cardExpiring } from "./card_expiring.js";
import { message as donorChange } from "./donor_change.js";
import { message as donorSignIn } from "./donor_sign_in.js";
import { message as giftActivation } from "./gift_activation.js";
import { message as giftDigest } from "./gift_digest.js";
import { message as giftNotification } from "./gift_notification.js";
import { message as passwordReset } from "./password_reset.js";
import { message as receipt } from "./receipt.js";
import { message as recurringCancelled } from "./recurring_cancelled.js";
import { message as recurringWelcome } from "./recurring_welcome.js";
import { message as renewalFailed } from "./renewal_failed.js";
import { message as statement } from "./statement.js";
import { message as tributeNotice } from "./tribute_notice.js";
import { message as webhookDisabled } from "./webhook_disabled.js";

/** Every message kind's loader and sample: one file per kind beside this one, one line each here. */
export const MESSAGES: Record<EmailKind, EmailMessage> = {
  donor_sign_in: donorSignIn as EmailMessage,
  donor_change: donorChange as EmailMessage,
  receipt: receipt as EmailMessage,
  recurring_welcome: recurringWelcome as EmailMessage,
  renewal_failed: renewalFailed as EmailMessage,
  card_expiring: cardExpiring as EmailMessage,
  recurring_cancelled: recurringCancelled as EmailMessage,
  bank_transfer: bankTransfer as EmailMessage,
  statement: statement as EmailMessage,
  gift_notification: giftNotification as EmailMessage,
  gift_digest: giftDigest as EmailMessage,
  webhook_disabled: webhookDisabled as EmailMessage,
  tribute_notice: tributeNotice as EmailMessage,
  gift_activation: giftActivation as EmailMessage,
  password_reset: passwordReset as EmailMessage,
};
