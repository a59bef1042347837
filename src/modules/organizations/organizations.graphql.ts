import { builder } from "../../graphql/builder.js";
import { getOrganization, type organizationToWire } from "./organizations.service.js";

type OrganizationWire = ReturnType<typeof organizationToWire>;

export const OrganizationType = builder.objectRef<OrganizationWire>("Organization").implement({
  description: "The organization the request acts for",
  fields: (t) => ({
    id: t.exposeInt("id"),
    slug: t.exposeString("slug"),
    name: t.exposeString("name"),
    currency: t.exposeString("currency", { description: "ISO 4217 code of every amount" }),
    time_zone: t.exposeString("time_zone", { description: "IANA time zone of whole-day date filters" }),
    create_date: t.exposeString("create_date"),
  }),
});

interface ViewerWire {
  kind: "application" | "member";
  email: string | null;
  role: string | null;
  application_id: number | null;
  permissions: string[];
}

const ViewerType = builder.objectRef<ViewerWire>("Viewer").implement({
  description: "Who is asking: a member signed in to the admin panel, or an installed application",
  fields: (t) => ({
    kind: t.exposeString("kind", { description: "member or application" }),
    email: t.exposeString("email", { nullable: true }),
    role: t.exposeString("role", { nullable: true, description: "owner, admin or member" }),
    application_id: t.exposeInt("application_id", { nullable: true }),
    permissions: t.exposeStringList("permissions", { description: "What an application was granted" }),
  }),
});

builder.queryField("organization", (t) =>
  t.field({
    type: OrganizationType,
    resolve: (_root, _args, context) => getOrganization(context.db, context.scope.organizationId),
  }),
);

builder.queryField("viewer", (t) =>
  t.field({
    type: ViewerType,
    resolve: (_root, _args, { actor }): ViewerWire =>
      actor.kind === "member"
        ? { kind: "member", email: actor.email, role: actor.role, application_id: null, permissions: [] }
        : {
            kind: "application",
            email: null,
            role: null,
            application_id: actor.applicationId,
            permissions: actor.permissions,
          },
  }),
);
