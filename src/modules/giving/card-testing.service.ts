import { createHmac, randomBytes } from "node:crypto";
import { createChallenge, verifySolution } from "altcha-lib";
import { deriveKey } from "altcha-lib/algorithms/pbkdf2";
import { and, count, eq, gte, sql } from "drizzle-orm";
import type { CardTestingConfig } from "../../config.js";
import type { Db, Executor } from "../../db/client.js";
import { checkoutAttempts, checkoutProtection, platformKeys, users } from "../../db/schema.js";
import { AppError } from "../../errors/app-error.js";
import type { LimitOutcome, LimitRule, LimitStore } from "../../limits/rate-limiter.js";

const HOUR = 3600;
export const CHALLENGE_ALGORITHM = "PBKDF2/SHA-256";

async function platformKey(db: Executor, name: string): Promise<string> {
  await db
    .insert(platformKeys)
    .values({ name, value: randomBytes(32).toString("base64url") })
    .onConflictDoNothing();
  const [row] = await db.select().from(platformKeys).where(eq(platformKeys.name, name));
  if (!row) throw new Error(`platform key ${name} missing after insert`);
  return row.value;
}

/** Seconds until the refusal ends, as a 429 problem with Retry-After (nothing was charged). */
function tooMany(
  outcome: LimitOutcome,
  code: "too_many_checkouts" | "too_many_attempts" | "too_many_declines",
  message: string,
): AppError {
  return new AppError(code, `${message}. Nothing was charged; try again in ${outcome.resetSeconds} s.`, {
    headers: { "retry-after": String(outcome.resetSeconds) },
  });
}

/** Declines reserved for one attempt: each rule, key and the count it reached. */
export interface DeclineReservation {
  organizationId: number;
  held: [LimitRule, string, LimitOutcome][];
}

export interface ProtectionState {
  challengeRequired: boolean;
  challengeForced: boolean;
  /** The automatic challenge is on until then (a spike of declines), or null. */
  challengeUntil: Date | null;
  lastSpikeDate: Date | null;
  changedBy: string | null;
  changedDate: Date | null;
}

/**
 * The checkout's defences against card testing: caps counted in the shared LimitStore (atomic
 * across processes), keyed fingerprints of cards and clients, the escalation to a proof-of-work
 * challenge (ALTCHA) when declines spike in an organization, and the challenge itself.
 */
export class CardTestingGuard {
  private readonly rules: {
    attempts: LimitRule;
    ipDeclines: LimitRule;
    cardDeclines: LimitRule;
    checkouts: LimitRule;
    spikeBlocked: LimitRule;
    spikeDeclines: LimitRule;
    usedChallenges: LimitRule;
  };

  constructor(
    readonly config: CardTestingConfig,
    private readonly limits: LimitStore,
    private readonly fingerprintKey: Buffer,
    private readonly challengeKey: string,
    /** The clock, so tests can move it. */
    readonly now: () => Date = () => new Date(),
  ) {
    this.rules = {
      attempts: { name: "checkout-attempts", points: config.attemptsPerCheckout, durationSeconds: 24 * HOUR },
      ipDeclines: { name: "declines-ip", points: config.declinesPerIp, durationSeconds: HOUR },
      cardDeclines: { name: "declines-card", points: config.declinesPerCard, durationSeconds: HOUR },
      checkouts: { name: "checkouts-ip", points: config.checkoutsPerIp, durationSeconds: HOUR },
      spikeBlocked: { name: "spike-blocked", points: config.spikeBlocked, durationSeconds: config.spikeWindowSeconds },
      spikeDeclines: {
        name: "spike-declines",
        points: config.spikeDeclines,
        durationSeconds: config.spikeWindowSeconds,
      },
      usedChallenges: { name: "altcha-used", points: 1, durationSeconds: config.challengeTtlSeconds + 60 },
    };
  }

  /** Keyed hash: the same card (or client) is recognised, its number (or address) is not kept. */
  fingerprint(kind: "card" | "client", value: string): string {
    return createHmac("sha256", this.fingerprintKey).update(`${kind}:${value}`).digest("base64url").slice(0, 32);
  }

  cardFingerprint(number: string): string {
    return this.fingerprint("card", String(number).replace(/[\s-]/g, ""));
  }

  async countCheckoutStart(clientIp: string) {
    const outcome = await this.limits.consume(this.rules.checkouts, this.fingerprint("client", clientIp));
    if (!outcome.allowed) {
      throw tooMany(outcome, "too_many_checkouts", "Too many checkouts were started from this network");
    }
  }

  /**
   * Before charging: counts the checkout's attempt, and reserves one decline of the client's and
   * the card's allowance, so concurrent attempts cannot overshoot the caps. `settle` keeps the
   * reservation when the card is declined and gives it back otherwise.
   */
  async reserveAttempt(
    organizationId: number,
    checkoutId: number,
    clientIp: string,
    cardNumber: string | undefined,
  ): Promise<DeclineReservation> {
    const attempts = await this.limits.consume(this.rules.attempts, `${organizationId}:${checkoutId}`);
    if (!attempts.allowed) {
      throw tooMany(attempts, "too_many_attempts", "Too many payment attempts on this checkout; start a new one");
    }
    const held: [LimitRule, string, LimitOutcome][] = [];
    const claims: [LimitRule, string, string][] = [
      [this.rules.ipDeclines, this.fingerprint("client", clientIp), "Too many declined payments from this network"],
    ];
    if (cardNumber !== undefined) {
      claims.push([this.rules.cardDeclines, this.cardFingerprint(cardNumber), "This card was declined too often"]);
    }
    for (const [rule, key, message] of claims) {
      const outcome = await this.limits.consume(rule, key);
      held.push([rule, key, outcome]);
      if (!outcome.allowed) {
        await this.release(held);
        throw tooMany(outcome, "too_many_declines", message);
      }
    }
    return { organizationId, held };
  }

  /** A negative count gives points back (rate-limiter-flexible's reward). */
  private async release(held: DeclineReservation["held"]) {
    for (const [rule, key] of held) await this.limits.consume(rule, key, -1);
  }

  /**
   * After the attempt: a decline keeps its reservation; a client or card that has just used its
   * last decline counts towards the organization's spike, and a spike turns the challenge on.
   * Anything else (paid, pending, refused before charging, failed) gives the reservation back.
   */
  async settle(db: Db, reservation: DeclineReservation, declined: boolean) {
    if (!declined) return this.release(reservation.held);
    const { organizationId } = reservation;
    const newlyBlocked = reservation.held.filter(([, , outcome]) => outcome.remaining === 0).length;
    let spike = false;
    if (newlyBlocked > 0) {
      const blocked = await this.limits.consume(this.rules.spikeBlocked, String(organizationId), newlyBlocked);
      spike ||= !blocked.allowed || blocked.remaining === 0;
    }
    const declines = await this.limits.consume(this.rules.spikeDeclines, String(organizationId));
    spike ||= !declines.allowed || declines.remaining === 0;
    if (spike) {
      const now = this.now();
      const until = new Date(now.getTime() + this.config.cooldownSeconds * 1000);
      await db
        .insert(checkoutProtection)
        .values({ organizationId, challengeUntil: until, lastSpikeDate: now })
        .onConflictDoUpdate({
          target: checkoutProtection.organizationId,
          set: { challengeUntil: until, lastSpikeDate: now, updateDate: sql`now()` },
        });
    }
  }

  async protectionOf(db: Executor, organizationId: number): Promise<ProtectionState> {
    const [row] = await db
      .select({ protection: checkoutProtection, email: users.email })
      .from(checkoutProtection)
      .leftJoin(users, eq(users.id, checkoutProtection.changedByUserId))
      .where(eq(checkoutProtection.organizationId, organizationId));
    const protection = row?.protection;
    const until = protection?.challengeUntil ?? null;
    const underAttack = until !== null && until.getTime() > this.now().getTime();
    return {
      challengeRequired: Boolean(protection?.challengeForced) || underAttack,
      challengeForced: Boolean(protection?.challengeForced),
      challengeUntil: underAttack ? until : null,
      lastSpikeDate: protection?.lastSpikeDate ?? null,
      changedBy: row?.email ?? null,
      changedDate: protection?.changedDate ?? null,
    };
  }

  async challengeRequired(db: Executor, organizationId: number): Promise<boolean> {
    return (await this.protectionOf(db, organizationId)).challengeRequired;
  }

  /** An admin forces the challenge on, or turns it off (which also ends an automatic cooling-off). */
  async setChallenge(db: Db, organizationId: number, enabled: boolean, userId: number | null) {
    const now = this.now();
    const values = {
      challengeForced: enabled,
      ...(enabled ? {} : { challengeUntil: null }),
      changedByUserId: userId,
      changedDate: now,
    };
    await db
      .insert(checkoutProtection)
      .values({ organizationId, ...values })
      .onConflictDoUpdate({ target: checkoutProtection.organizationId, set: { ...values, updateDate: sql`now()` } });
    return this.protectionOf(db, organizationId);
  }

  /** Declines recorded for the organization since `since` (what the admin panel shows). */
  async declinesSince(db: Executor, organizationId: number, since: Date): Promise<number> {
    const [row] = await db
      .select({ n: count() })
      .from(checkoutAttempts)
      .where(
        and(
          eq(checkoutAttempts.organizationId, organizationId),
          eq(checkoutAttempts.state, "DECLINED"),
          gte(checkoutAttempts.createDate, since),
        ),
      );
    return Number(row?.n ?? 0);
  }

  /** A fresh ALTCHA challenge, signed and bound to the organization. */
  async createChallenge(organizationId: number) {
    const max = this.config.challengeMaxNumber;
    const counter = Math.floor(max / 2) + Math.floor(Math.random() * (max - Math.floor(max / 2)));
    return createChallenge({
      algorithm: CHALLENGE_ALGORITHM,
      cost: this.config.challengeCost,
      counter,
      deriveKey,
      data: { organization: organizationId },
      expiresAt: Math.floor(this.now().getTime() / 1000) + this.config.challengeTtlSeconds,
      hmacSignatureSecret: this.challengeKey,
      hmacKeySignatureSecret: `${this.challengeKey}:key`,
    });
  }

  /** Checks the widget's payload (base64 JSON of challenge and solution) and uses it up. */
  async redeemChallenge(organizationId: number, payload: string | undefined) {
    const field = [{ field: "altcha", message: "a solved ALTCHA challenge is required" }];
    if (payload === undefined || payload === "") {
      throw new AppError(
        "challenge_required",
        "The donation form is protected right now: solve the proof-of-work challenge (ALTCHA) and send its payload as `altcha`",
        { errors: field },
      );
    }
    const invalid = () =>
      new AppError(
        "challenge_invalid",
        "The ALTCHA payload is invalid, expired or already used; solve a new challenge",
        { errors: [{ field: "altcha", message: "invalid, expired or already used" }] },
      );
    let decoded: {
      challenge?: { parameters?: { data?: { organization?: unknown } }; signature?: unknown };
      solution?: unknown;
    };
    try {
      decoded = JSON.parse(Buffer.from(payload, "base64").toString("utf8"));
    } catch {
      throw invalid();
    }
    const { challenge, solution } = decoded ?? {};
    if (
      !challenge ||
      typeof challenge !== "object" ||
      typeof challenge.signature !== "string" ||
      !solution ||
      typeof solution !== "object" ||
      challenge.parameters?.data?.organization !== organizationId
    ) {
      throw invalid();
    }
    let verified = false;
    try {
      const result = await verifySolution({
        challenge: challenge as Parameters<typeof verifySolution>[0]["challenge"],
        solution: solution as Parameters<typeof verifySolution>[0]["solution"],
        deriveKey,
        hmacSignatureSecret: this.challengeKey,
        hmacKeySignatureSecret: `${this.challengeKey}:key`,
      });
      verified = result.verified;
    } catch {
      verified = false;
    }
    if (!verified) throw invalid();
    // A solution is good once: the signature is the challenge's identity.
    const use = await this.limits.consume(this.rules.usedChallenges, challenge.signature);
    if (!use.allowed) throw invalid();
  }
}

export async function loadCardTestingGuard(
  db: Executor,
  limits: LimitStore,
  config: CardTestingConfig,
  now?: () => Date,
): Promise<CardTestingGuard> {
  const fingerprintKey = Buffer.from(await platformKey(db, "card_fingerprints"), "base64url");
  const challengeKey = await platformKey(db, "altcha");
  return new CardTestingGuard(config, limits, fingerprintKey, challengeKey, now);
}
