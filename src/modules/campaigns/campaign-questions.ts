import { type Static, Type } from "typebox";
import { AppError } from "../../errors/app-error.js";
import { nullable, wireObject } from "../../http/schema-types.js";
import { type FieldProblem, fieldIssue, fieldProblem } from "../../i18n/field-problems.js";

/**
 * A campaign's own questions (a T-shirt size, "how did you hear about us") and a gift's tribute
 * ("in honour of", "in memory of"): their shapes on the wire, shared by campaigns (which define the
 * questions), giving (which takes the answers) and donations (which keep them). docs/campaigns.md.
 */

export const QUESTION_TYPES = ["short_text", "long_text", "single_choice", "multiple_choice", "checkbox"] as const;
export type QuestionType = (typeof QUESTION_TYPES)[number];

export const QUESTION_LIMITS = {
  questions: 20,
  label: 300,
  options: 30,
  option: 200,
  shortText: 200,
  longText: 2000,
} as const;

/** A question as a campaign defines it; `key` is stable (answers are kept under it). */
export const CampaignQuestion = wireObject(
  {
    key: Type.String({
      pattern: "^[a-z0-9](?:[a-z0-9_]{0,48}[a-z0-9])?$",
      description: "Stable identifier of the question (lowercase letters, digits, underscores); answers carry it",
    }),
    type: Type.String({ enum: [...QUESTION_TYPES] }),
    label: Type.String({ minLength: 1, maxLength: QUESTION_LIMITS.label }),
    required: Type.Boolean({ description: "A gift cannot complete without an answer (checkbox: must be ticked)" }),
    options: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: QUESTION_LIMITS.option }), {
        maxItems: QUESTION_LIMITS.options,
        uniqueItems: true,
        description: "The choices of single_choice and multiple_choice questions (at least two); absent otherwise",
      }),
    ),
  },
  "A question the donation form asks",
);
export type CampaignQuestionWire = Static<typeof CampaignQuestion>;

/** What a donor answered: text for short and long text and single choice, a list for multiple choice, true/false for a checkbox. */
export const AnswerValue = Type.Union([
  Type.String({ maxLength: QUESTION_LIMITS.longText }),
  Type.Array(Type.String({ maxLength: QUESTION_LIMITS.option }), { maxItems: QUESTION_LIMITS.options }),
  Type.Boolean(),
]);
export type AnswerValue = Static<typeof AnswerValue>;

/** An answer kept with the donation, with its question as it was asked then. */
export const DonationAnswer = wireObject(
  {
    key: Type.String(),
    label: Type.String({ description: "The question's wording when the gift was made" }),
    type: Type.String({ enum: [...QUESTION_TYPES] }),
    value: AnswerValue,
  },
  "An answer to one of the campaign's questions",
);
export type DonationAnswerWire = Static<typeof DonationAnswer>;

export const TRIBUTE_TYPES = ["honor", "memory"] as const;
export type TributeType = (typeof TRIBUTE_TYPES)[number];

export const TRIBUTE_LIMITS = { name: 200, message: 1000 } as const;

/** A gift made in honour or in memory of someone, as a donation carries it. */
export const Tribute = wireObject(
  {
    type: Type.String({ enum: [...TRIBUTE_TYPES], description: "honor: in honour of; memory: in memory of" }),
    name: Type.String({ description: "Who the gift honours or remembers" }),
    message: nullable(Type.String()),
    recipient_name: nullable(Type.String({ description: "Who is told of the gift by email" })),
    recipient_email: nullable(Type.String({ description: "Where that notice goes; null: nobody is told" })),
  },
  "A gift in honour or in memory of someone",
);
export type TributeWire = Static<typeof Tribute>;

/** A suggested amount's line of impact ("€30 buys a school kit"). */
export const AskImpact = wireObject(
  {
    amount: Type.Number({ description: "One of the campaign's asks (recurring: asks_subscription)" }),
    recurring: Type.Boolean({ description: "true: the line belongs to a recurring suggested amount" }),
    text: Type.String({ minLength: 1, maxLength: 200 }),
  },
  "What a suggested amount makes possible",
);
export type AskImpactWire = Static<typeof AskImpact>;

/** The tribute columns of a donation row, as the wire shows them (null: not a tribute gift). */
export function tributeOf(row: {
  tributeType: string | null;
  tributeName: string | null;
  tributeMessage: string | null;
  tributeRecipientName: string | null;
  tributeRecipientEmail: string | null;
}): TributeWire | null {
  if (!row.tributeType || !row.tributeName) return null;
  return {
    type: row.tributeType,
    name: row.tributeName,
    message: row.tributeMessage,
    recipient_name: row.tributeRecipientName,
    recipient_email: row.tributeRecipientEmail,
  };
}

/** The stored questions of a campaign row (jsonb). */
export const questionsOf = (row: { questions: unknown }): CampaignQuestionWire[] =>
  Array.isArray(row.questions) ? (row.questions as CampaignQuestionWire[]) : [];

/** The stored answers of a donation row (jsonb), or none. */
export const answersOf = (row: { answers: unknown }): DonationAnswerWire[] =>
  Array.isArray(row.answers) ? (row.answers as DonationAnswerWire[]) : [];

/** The stored impact lines of a campaign row (jsonb; amounts kept as decimal strings). */
export const askImpactsOf = (row: { askImpacts: unknown }): AskImpactWire[] =>
  Array.isArray(row.askImpacts)
    ? (row.askImpacts as { amount: string; recurring: boolean; text: string }[]).map((impact) => ({
        amount: Number(impact.amount),
        recurring: impact.recurring,
        text: impact.text,
      }))
    : [];

/** A tribute as a donor sends it with the completion (giving.schemas.ts). */
export const TributeInput = Type.Object(
  {
    type: Type.String({ enum: [...TRIBUTE_TYPES], description: "honor: in honour of; memory: in memory of" }),
    name: Type.String({
      minLength: 1,
      maxLength: TRIBUTE_LIMITS.name,
      description: "Who the gift honours or remembers",
    }),
    message: Type.Optional(Type.String({ maxLength: TRIBUTE_LIMITS.message })),
    recipient_name: Type.Optional(
      Type.String({ maxLength: TRIBUTE_LIMITS.name, description: "Who is told of the gift (their greeting)" }),
    ),
    recipient_email: Type.Optional(
      Type.String({
        format: "email",
        maxLength: 254,
        description: "Told of the gift by email once it is paid (never of its amount); without it nobody is told",
      }),
    ),
  },
  {
    additionalProperties: false,
    description: "Only when the campaign's allow_tribute is true: the gift is made in honour or in memory of someone",
  },
);
export type TributeInput = Static<typeof TributeInput>;

/** Answers as a donor sends them, by question key. */
export const AnswersInput = Type.Record(Type.String({ maxLength: 50 }), AnswerValue, {
  maxProperties: QUESTION_LIMITS.questions,
  description:
    "Answers to the campaign's questions by key: text for short_text, long_text and single_choice, a list of " +
    "options for multiple_choice, true/false for checkbox",
});
export type AnswersInput = Static<typeof AnswersInput>;

/** A refusal of what the donor sent beside the gift, as one field issue. */
function refused(
  code: "field_not_on_form" | "missing_required_field" | "invalid_request",
  field: string,
  problem: FieldProblem,
) {
  const issue = fieldIssue(field, problem);
  return new AppError(code, `Invalid field "${field}": ${issue.message}`, { errors: [issue] });
}

const filled = (value: string | undefined) => {
  const trimmed = value?.trim();
  return trimmed ? trimmed : null;
};

/** The donation's tribute columns from the donor's tribute, checked against the campaign; nulls when there is none. */
export function checkTribute(allowTribute: boolean, input: TributeInput | undefined) {
  const none = {
    tributeType: null,
    tributeName: null,
    tributeMessage: null,
    tributeRecipientName: null,
    tributeRecipientEmail: null,
  };
  if (input === undefined) return none;
  if (!allowTribute) throw refused("field_not_on_form", "tribute", fieldProblem("tribute_not_offered"));
  const name = filled(input.name);
  if (!name) throw refused("invalid_request", "tribute.name", fieldProblem("required"));
  return {
    tributeType: input.type as TributeType,
    tributeName: name,
    tributeMessage: filled(input.message),
    tributeRecipientName: filled(input.recipient_name),
    tributeRecipientEmail: filled(input.recipient_email),
  };
}

/**
 * The answers to keep with the donation, in the campaign's order of its questions, each with the
 * question's wording and type as asked now; a refusal names the first wrong answer.
 */
export function checkAnswers(questions: CampaignQuestionWire[], input: AnswersInput | undefined): DonationAnswerWire[] {
  const given = input ?? {};
  const byKey = new Map(questions.map((question) => [question.key, question]));
  for (const key of Object.keys(given)) {
    if (!byKey.has(key)) throw refused("field_not_on_form", `answers.${key}`, fieldProblem("not_asked"));
  }
  const answers: DonationAnswerWire[] = [];
  for (const question of questions) {
    // Own keys only: a question keyed "constructor" must not read Object's.
    const value = answerOf(question, Object.hasOwn(given, question.key) ? given[question.key] : undefined);
    if (value === null) {
      if (question.required) {
        const problem = question.type === "checkbox" ? fieldProblem("must_be_ticked") : fieldProblem("answer_required");
        throw refused("missing_required_field", `answers.${question.key}`, problem);
      }
      continue;
    }
    answers.push({ key: question.key, label: question.label, type: question.type, value });
  }
  return answers;
}

/** One answer in its question's form, null when unanswered (blank text, no choice, an unticked box). */
function answerOf(question: CampaignQuestionWire, raw: AnswerValue | undefined): AnswerValue | null {
  if (raw === undefined) return null;
  const field = `answers.${question.key}`;
  const options = question.options ?? [];
  switch (question.type) {
    case "checkbox":
      if (typeof raw !== "boolean") throw refused("invalid_request", field, fieldProblem("answer_true_or_false"));
      return raw ? true : null;
    case "multiple_choice": {
      if (!Array.isArray(raw)) throw refused("invalid_request", field, fieldProblem("answer_list"));
      const unknown = raw.find((choice) => !options.includes(choice));
      if (unknown !== undefined) {
        throw refused("invalid_request", field, fieldProblem("one_of", { choices: options.join(", ") }));
      }
      const chosen = options.filter((option) => raw.includes(option));
      return chosen.length > 0 ? chosen : null;
    }
    default: {
      if (typeof raw !== "string") throw refused("invalid_request", field, fieldProblem("answer_text"));
      const text = raw.trim();
      if (text === "") return null;
      if (question.type === "single_choice" && !options.includes(text)) {
        throw refused("invalid_request", field, fieldProblem("one_of", { choices: options.join(", ") }));
      }
      const max = question.type === "long_text" ? QUESTION_LIMITS.longText : QUESTION_LIMITS.shortText;
      if (text.length > max) throw refused("invalid_request", field, fieldProblem("too_long", { max }));
      return text;
    }
  }
}

/** An answer's value as a line of text ("M", "Radio, A friend", "yes"): the CSV export and the panel print it so. */
export function answerText(value: AnswerValue, yes = "yes", no = "no"): string {
  if (Array.isArray(value)) return value.join(", ");
  if (typeof value === "boolean") return value ? yes : no;
  return value;
}
