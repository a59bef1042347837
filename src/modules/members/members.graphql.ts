import { requireRecentCheck } from "../../auth/step-up.js";
import { AppError } from "../../errors/app-error.js";
import { builder } from "../../graphql/builder.js";
import type { GraphQLContext } from "../../graphql/context.js";
import {
  addMember,
  changeMemberRole,
  listMembers,
  type MemberActor,
  type MemberWire,
  removeMember,
} from "./members.service.js";

const MemberType = builder.objectRef<MemberWire>("Member").implement({
  description: "A person with access to the organization's admin panel",
  fields: (t) => ({
    user_id: t.exposeInt("user_id"),
    email: t.exposeString("email"),
    name: t.exposeString("name", { nullable: true }),
    role: t.exposeString("role", { description: "owner, admin or member" }),
    create_date: t.exposeString("create_date", { description: "When they joined the organization" }),
  }),
});

const AddMemberResultType = builder
  .objectRef<{ member: MemberWire; temporary_password: string | null }>("AddMemberResult")
  .implement({
    fields: (t) => ({
      member: t.field({ type: MemberType, resolve: (parent) => parent.member }),
      temporary_password: t.exposeString("temporary_password", {
        nullable: true,
        description: "Set when a new account was created without a password; shown once, pass it on securely",
      }),
    }),
  });

/** Members are managed by people signed in to the panel, never by applications. */
function memberActor(context: GraphQLContext): MemberActor {
  if (context.actor.kind !== "member") {
    throw new AppError("insufficient_scope", "Members are managed in the admin panel, not by applications");
  }
  return { userId: context.actor.userId, role: context.actor.role, origin: context.scope.origin };
}

builder.queryFields((t) => ({
  members: t.field({
    type: [MemberType],
    description: "The organization's members and their roles",
    resolve: (_root, _args, context) => {
      memberActor(context);
      return listMembers(context.db, context.scope.organizationId);
    },
  }),
}));

builder.mutationFields((t) => ({
  addMember: t.field({
    type: AddMemberResultType,
    description: "Adds a person (a new or existing account) with a role; owners and admins only, owners for owner",
    args: {
      email: t.arg.string({ required: true }),
      role: t.arg.string({ required: true }),
      password: t.arg.string({ description: "For a new account; a temporary one is made when omitted" }),
    },
    resolve: (_root, args, context) => {
      // A new owner can do anything, sign others out of it included: a recent check of who asks (step-up).
      if (args.role === "owner") requireRecentCheck(context.actor);
      return addMember(context.db, context.scope.organizationId, memberActor(context), args);
    },
  }),
  changeMemberRole: t.field({
    type: MemberType,
    description: "Changes a member's role; only owners grant or take away owner; the last owner stays",
    args: { user_id: t.arg.int({ required: true }), role: t.arg.string({ required: true }) },
    resolve: (_root, args, context) => {
      if (args.role === "owner") requireRecentCheck(context.actor);
      return changeMemberRole(context.db, context.scope.organizationId, memberActor(context), args.user_id, args.role);
    },
  }),
  removeMember: t.field({
    type: "Boolean",
    description: "Removes a member from the organization (their account stays); the last owner cannot be removed",
    args: { user_id: t.arg.int({ required: true }) },
    resolve: (_root, args, context) =>
      removeMember(context.db, context.scope.organizationId, memberActor(context), args.user_id),
  }),
}));
