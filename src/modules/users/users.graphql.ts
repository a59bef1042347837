import { AppError } from "../../errors/app-error.js";
import { builder } from "../../graphql/builder.js";
import type { GraphQLContext } from "../../graphql/context.js";
import { getUserPreferences, type UserPreferencesWire, updateUserPreferences } from "../../identity/users.service.js";

const UserPreferencesType = builder.objectRef<UserPreferencesWire>("UserPreferences").implement({
  description: "The signed-in member's own settings of the admin panel",
  fields: (t) => ({
    locale: t.exposeString("locale", {
      nullable: true,
      description:
        "The language the user chose for the panel and the sign-in pages (en or it); null: none chosen, " +
        "so the browser's languages apply, then the organization's",
    }),
    organization_locale: t.exposeString("organization_locale", {
      description: "The organization's default language (en or it), the panel's last word before English",
    }),
  }),
});

const UserPreferencesInput = builder.inputType("UserPreferencesInput", {
  fields: (t) => ({
    locale: t.string({ description: "en or it; null forgets the choice; absent leaves it as it is" }),
  }),
});

/** Preferences belong to a person signed in to the panel, never to an application. */
function signedInUser(context: GraphQLContext): number {
  if (context.actor.kind !== "member") {
    throw new AppError("insufficient_scope", "Preferences belong to people signed in to the admin panel");
  }
  return context.actor.userId;
}

builder.queryField("myPreferences", (t) =>
  t.field({
    type: UserPreferencesType,
    description: "The signed-in member's settings of the panel (their language) and the organization's language",
    resolve: (_root, _args, context) =>
      getUserPreferences(context.db, signedInUser(context), context.scope.organizationId),
  }),
);

builder.mutationField("updateMyPreferences", (t) =>
  t.field({
    type: UserPreferencesType,
    description:
      "Saves the signed-in member's language for the panel and the sign-in pages (en or it, null to forget it); " +
      "any other value is an invalid_request",
    args: { input: t.arg({ type: UserPreferencesInput, required: true }) },
    resolve: (_root, args, context) =>
      updateUserPreferences(context.db, signedInUser(context), context.scope.organizationId, args.input),
  }),
);
