import { AppError } from "../../errors/app-error.js";
import { builder } from "../../graphql/builder.js";
import { authorize, type GraphQLContext } from "../../graphql/context.js";
import type { ProtectionState } from "./card-testing.service.js";

interface ProtectionWire {
  challenge_required: boolean;
  challenge_forced: boolean;
  under_attack: boolean;
  challenge_until: string | null;
  last_spike_date: string | null;
  declines_last_hour: number;
  declines_last_day: number;
  changed_by: string | null;
  changed_date: string | null;
}

async function protectionWire(context: GraphQLContext, state: ProtectionState): Promise<ProtectionWire> {
  const { guard, db, scope } = context;
  const now = guard.now().getTime();
  return {
    challenge_required: state.challengeRequired,
    challenge_forced: state.challengeForced,
    under_attack: state.challengeUntil !== null,
    challenge_until: state.challengeUntil?.toISOString() ?? null,
    last_spike_date: state.lastSpikeDate?.toISOString() ?? null,
    declines_last_hour: await guard.declinesSince(db, scope.organizationId, new Date(now - 3600_000)),
    declines_last_day: await guard.declinesSince(db, scope.organizationId, new Date(now - 86400_000)),
    changed_by: state.changedBy,
    changed_date: state.changedDate?.toISOString() ?? null,
  };
}

const CheckoutProtectionType = builder.objectRef<ProtectionWire>("CheckoutProtection").implement({
  description: "Card-testing defence of the organization's donation form (docs/security.md)",
  fields: (t) => ({
    challenge_required: t.exposeBoolean("challenge_required", {
      description: "Completing a checkout needs a solved proof-of-work challenge (ALTCHA) right now",
    }),
    challenge_forced: t.exposeBoolean("challenge_forced", { description: "An admin turned the challenge on" }),
    under_attack: t.exposeBoolean("under_attack", {
      description: "Declines spiked: the challenge is on automatically until challenge_until",
    }),
    challenge_until: t.exposeString("challenge_until", { nullable: true }),
    last_spike_date: t.exposeString("last_spike_date", { nullable: true }),
    declines_last_hour: t.exposeInt("declines_last_hour", { description: "Declined checkout attempts" }),
    declines_last_day: t.exposeInt("declines_last_day"),
    changed_by: t.exposeString("changed_by", { nullable: true, description: "Who last turned it on or off" }),
    changed_date: t.exposeString("changed_date", { nullable: true }),
  }),
});

builder.queryField("checkoutProtection", (t) =>
  t.field({
    type: CheckoutProtectionType,
    description: "Whether the donation form is under a card-testing attack and asks for a challenge",
    resolve: async (_root, _args, context) => {
      authorize(context, "checkouts:read");
      return protectionWire(context, await context.guard.protectionOf(context.db, context.scope.organizationId));
    },
  }),
);

builder.mutationField("setCheckoutChallenge", (t) =>
  t.field({
    type: CheckoutProtectionType,
    description:
      "Owners and admins turn the donation form's challenge on (until turned off) or off (also ending an automatic cooling-off)",
    args: { enabled: t.arg.boolean({ required: true }) },
    resolve: async (_root, { enabled }, context) => {
      const { actor } = context;
      if (actor.kind !== "member" || (actor.role !== "owner" && actor.role !== "admin")) {
        throw new AppError(
          "insufficient_scope",
          actor.kind === "member"
            ? `Your role (${actor.role}) does not allow changing the donation form's protection`
            : "Only an owner or admin of the organization may change the donation form's protection",
        );
      }
      const state = await context.guard.setChallenge(context.db, context.scope.organizationId, enabled, actor.userId);
      return protectionWire(context, state);
    },
  }),
);
