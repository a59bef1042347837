import { Type } from "typebox";

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String({ description: "Stable snake_case error code" }),
    errors: Type.Optional(
      Type.Array(
        Type.Object({
          parameter: Type.Optional(Type.String()),
          field: Type.Optional(Type.String()),
          message: Type.String({ description: "What is wrong, in the request's language (Accept-Language)" }),
          code: Type.Optional(
            Type.String({ description: "The problem's stable code (too_long, check_digit, iban_checksum…)" }),
          ),
          values: Type.Optional(
            Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()]), {
              description: "The particulars the message names (max, country…), for clients that word it themselves",
            }),
          ),
        }),
      ),
    ),
  },
  { $id: "Problem", description: "RFC 9457 problem details" },
);

const problem = (description: string) => ({
  description,
  content: { "application/problem+json": { schema: Type.Ref("Problem") } },
});

export const ProblemResponses = {
  400: problem("Invalid parameters"),
  401: problem("Missing, invalid, expired or revoked access token"),
  403: problem("The application lacks the permission"),
  404: problem("No such record in the token's organization"),
};
