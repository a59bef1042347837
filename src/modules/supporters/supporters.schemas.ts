import { type Static, Type } from "typebox";
import { DateFilter, listQuerySchema, listResponseSchema } from "../../http/pagination.js";
import { CalendarDate, DateTime, Id, nullable, Tags, wireObject } from "../../http/schema-types.js";

const Text = () => nullable(Type.String());
const Consent = () => nullable(Type.Boolean());

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
    certification_url: nullable(Type.String({ format: "uri" })),
    privacy: Consent(),
    email_marketing: Consent(),
    phone_marketing: Consent(),
    sms_marketing: Consent(),
    postal_marketing: Consent(),
    profilation_marketing: Consent(),
    tags: Tags,
    note: Text(),
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
  create_date_from: Type.Optional(DateFilter),
  create_date_to: Type.Optional(DateFilter),
  update_date_from: Type.Optional(DateFilter),
  update_date_to: Type.Optional(DateFilter),
});
export type SupporterListQuery = Static<typeof SupporterListQuery>;

export const SupporterList = listResponseSchema(Supporter, "supporters");
