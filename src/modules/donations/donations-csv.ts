import { answerText } from "../campaigns/campaign-questions.js";
import type { DonationWire } from "./donations.schemas.js";

/**
 * The donations CSV beyond the wire's columns: the tribute in five columns (ready for a mail merge of
 * acknowledgement letters) and the answers in one, `label: value; label: value`, since the questions
 * differ between campaigns and change over time (docs/campaigns.md).
 */
export const DONATION_CSV_EXTRA_COLUMNS = [
  "tribute_type",
  "tribute_name",
  "tribute_message",
  "tribute_recipient_name",
  "tribute_recipient_email",
  "answers",
] as const;

/** The wire fields the extra columns replace. */
export const DONATION_CSV_REPLACED = ["tribute", "answers"] as const;

export function donationCsvCells(donation: DonationWire): Record<(typeof DONATION_CSV_EXTRA_COLUMNS)[number], unknown> {
  const { tribute } = donation;
  return {
    tribute_type: tribute?.type ?? null,
    tribute_name: tribute?.name ?? null,
    tribute_message: tribute?.message ?? null,
    tribute_recipient_name: tribute?.recipient_name ?? null,
    tribute_recipient_email: tribute?.recipient_email ?? null,
    answers: donation.answers.map((answer) => `${answer.label}: ${answerText(answer.value)}`).join("; ") || null,
  };
}
