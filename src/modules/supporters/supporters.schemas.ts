import { type Static, Type } from "typebox";
import { ExternalId, ExternalIdFilter } from "../../http/external-id.js";
import { DateFilter, listQuerySchema, listResponseSchema } from "../../http/pagination.js";
import { CalendarDate, DateTime, Id, nullable, Tags, wireObject } from "../../http/schema-types.js";
import { DOCUMENT_LINK_NOTE } from "../documents/document-access.js";

const Text = () => nullable(Type.String());
const Consent = () => nullable(Type.Boolean());

/** The consents a supporter gives or refuses, as the wire names them. */
export const CONSENT_NAMES = [
  "privacy",
  "email_marketing",
  "phone_marketing",
  "sms_marketing",
  "postal_marketing",
  "profilation_marketing",
] as const;
export type ConsentName = (typeof CONSENT_NAMES)[number];

export const Supporter = wireObject(
  {
    id: Id,
    create_date: DateTime,
    update_date: DateTime,
    image: Text(),
    code: Text(),
    business_name: Text(),
    first_name: Text(),
    last_name: Text(),
    email: Text(),
    phone: Text(),
    mobile: Text(),
    job: Text(),
    sex: nullable(Type.String({ enum: ["MALE", "FEMALE"] })),
    date_of_birth: nullable(CalendarDate),
    place_of_birth: Text(),
    ssn: Text(),
    vat: Text(),
    address: Text(),
    address2: Text(),
    city: Text(),
    locality: Text(),
    country: Text(),
    postal_code: Text(),
    certification_url: nullable(
      Type.String({ format: "uri", description: `The yearly statement of donations: ${DOCUMENT_LINK_NOTE}` }),
    ),
    privacy: Consent(),
    email_marketing: Consent(),
    phone_marketing: Consent(),
    sms_marketing: Consent(),
    postal_marketing: Consent(),
    profilation_marketing: Consent(),
    tags: Tags,
    note: Text(),
    erase_date: nullable({ ...DateTime, description: "When the personal data was erased on request (GDPR)" }),
    external_id: nullable(ExternalId("supporter")),
  },
  "A person or business that gives to the organization",
);
export type SupporterWire = Static<typeof Supporter>;

export const SUPPORTER_ORDER_FIELDS = [
  "id",
  "create_date",
  "update_date",
  "code",
  "business_name",
  "first_name",
  "last_name",
  "email",
  "phone",
  "mobile",
  "job",
  "sex",
  "date_of_birth",
  "place_of_birth",
  "vat",
  "address",
  "city",
  "locality",
  "country",
  "postal_code",
  "privacy",
  "email_marketing",
  "phone_marketing",
  "sms_marketing",
  "postal_marketing",
  "profilation_marketing",
  "external_id",
] as const;

export const SupporterListQuery = listQuerySchema(SUPPORTER_ORDER_FIELDS, {
  q: Type.Optional(
    Type.String({
      maxLength: 200,
      description: "Case-insensitive substring of first, last or business name, or email",
    }),
  ),
  email: Type.Optional(Type.String({ maxLength: 320, description: "Exact email, case-insensitive" })),
  tag: Type.Optional(Type.String({ maxLength: 100 })),
  country: Type.Optional(Type.String({ maxLength: 100 })),
  external_id: Type.Optional(ExternalIdFilter),
  create_date_from: Type.Optional(DateFilter),
  create_date_to: Type.Optional(DateFilter),
  update_date_from: Type.Optional(DateFilter),
  update_date_to: Type.Optional(DateFilter),
});
export type SupporterListQuery = Static<typeof SupporterListQuery>;

export const SupporterList = listResponseSchema(Supporter, "supporters");

const optionalText = (maxLength: number, extra: Record<string, unknown> = {}) =>
  Type.Optional(nullable(Type.String({ maxLength, ...extra })));
const optionalConsent = () => Type.Optional(nullable(Type.Boolean()));

const editableSupporterFields = {
  image: optionalText(2000, { format: "uri" }),
  code: optionalText(100),
  business_name: optionalText(200),
  first_name: optionalText(100),
  last_name: optionalText(100),
  email: optionalText(320, { format: "email" }),
  phone: optionalText(50),
  mobile: optionalText(50),
  job: optionalText(200),
  sex: Type.Optional(nullable(Type.String({ enum: ["MALE", "FEMALE"] }))),
  date_of_birth: Type.Optional(nullable(Type.String({ format: "date" }))),
  place_of_birth: optionalText(200),
  ssn: optionalText(50),
  vat: optionalText(50),
  address: optionalText(300),
  address2: optionalText(300),
  city: optionalText(100),
  locality: optionalText(100),
  country: optionalText(2, { pattern: "^[A-Z]{2}$", description: "ISO 3166-1 alpha-2" }),
  postal_code: optionalText(20),
  privacy: optionalConsent(),
  email_marketing: optionalConsent(),
  phone_marketing: optionalConsent(),
  sms_marketing: optionalConsent(),
  postal_marketing: optionalConsent(),
  profilation_marketing: optionalConsent(),
  tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50, uniqueItems: true })),
  note: optionalText(5000),
};

export const SupporterInput = Type.Object(editableSupporterFields, {
  additionalProperties: false,
  description: "A new supporter: a name, a business name or an email is needed",
});
export type SupporterInput = Static<typeof SupporterInput>;

export const SupporterPatch = Type.Object(editableSupporterFields, {
  additionalProperties: false,
  description: "Changes to a supporter, consents included; omitted fields stay, null clears",
});
export type SupporterPatch = Static<typeof SupporterPatch>;
