import type { EmailKind } from "../outbox.repo.js";
import type { EmailMessage } from "../render.js";
import { message as donorChange } from "./donor_change.js";
import { message as donorSignIn } from "./donor_sign_in.js";

/** Every message kind's loader and sample: one file per kind beside this one, one line each here. */
export const MESSAGES: Partial<Record<EmailKind, EmailMessage>> = {
  donor_sign_in: donorSignIn as EmailMessage,
  donor_change: donorChange as EmailMessage,
};
