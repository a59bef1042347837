import type { FastifyReply } from "fastify";
import { Type } from "typebox";
import { CHALLENGE_LIFETIME_SECONDS } from "../identity/passkeys.service.js";
import { cookieAttributes } from "./cookies.js";

/**
 * What every passkey ceremony's routes share (the panel's, src/admin/passkeys.routes.ts, and the OAuth
 * login page's, src/oauth/passkey.routes.ts): the browser's half of a challenge, a random token whose
 * hash is the challenge's row, in a cookie that lives as long as the challenge and goes only to the
 * two routes of its ceremony; and the wire shapes of the options and of the browser's answer.
 */
export const PASSKEY_CHALLENGE_COOKIE = "donata_passkey";
/** A ceremony's answer is a few kilobytes; nothing bigger is read. */
export const PASSKEY_BODY_LIMIT = 64 * 1024;

const challengeCookie = (publicUrl: string, path: string) => cookieAttributes(publicUrl, { path, sameSite: "strict" });

/** Gives the browser the challenge's token, for the routes under `path` of the origin `publicUrl`. */
export function holdPasskeyChallenge(reply: FastifyReply, publicUrl: string, path: string, token: string) {
  reply.setCookie(PASSKEY_CHALLENGE_COOKIE, token, {
    ...challengeCookie(publicUrl, path),
    maxAge: CHALLENGE_LIFETIME_SECONDS,
  });
}

/** The challenge is used up by its first answer, right or wrong: the cookie goes with it. */
export function dropPasskeyChallenge(reply: FastifyReply, publicUrl: string, path: string) {
  reply.clearCookie(PASSKEY_CHALLENGE_COOKIE, challengeCookie(publicUrl, path));
}

export const base64url = (maxLength: number) =>
  Type.String({ minLength: 1, maxLength, pattern: "^[A-Za-z0-9_-]*={0,2}$" });
export const credentialFields = {
  id: base64url(1400),
  rawId: base64url(1400),
  type: Type.Literal("public-key"),
  clientExtensionResults: Type.Object({}, { additionalProperties: true }),
  authenticatorAttachment: Type.Optional(Type.String({ maxLength: 30 })),
};
/** What navigator.credentials.get() answered (as @simplewebauthn/browser encodes it); the service checks it. */
export const AssertionCredential = Type.Object({
  ...credentialFields,
  response: Type.Object(
    {
      clientDataJSON: base64url(4096),
      authenticatorData: base64url(4096),
      signature: base64url(2048),
      userHandle: Type.Optional(base64url(256)),
    },
    { additionalProperties: true },
  ),
});
/** WebAuthn options for the browser (PublicKeyCredentialCreationOptionsJSON / …RequestOptionsJSON). */
export const CeremonyOptions = Type.Object({ challenge: Type.String() }, { additionalProperties: true });
