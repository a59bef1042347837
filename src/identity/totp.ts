import { Secret, TOTP } from "otpauth";
import QRCode from "qrcode";

/** What an authenticator app is told of the account (RFC 6238 defaults: SHA-1, 6 digits, 30 seconds). */
const ISSUER = "Donata";
const PERIOD_SECONDS = 30;
const DIGITS = 6;
/** A code of the step before or after the current one is accepted too: clocks drift. */
const WINDOW_STEPS = 1;

const totpOf = (secret: string, email = "") =>
  new TOTP({
    issuer: ISSUER,
    label: email,
    algorithm: "SHA1",
    digits: DIGITS,
    period: PERIOD_SECONDS,
    secret: Secret.fromBase32(secret),
  });

/** A new shared secret: 160 random bits in base32, as authenticator apps take it typed in. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The otpauth:// URI an authenticator app reads from the QR code. */
export function totpUri(secret: string, email: string): string {
  return totpOf(secret, email).toString();
}

/** The URI as a QR code, an SVG document drawn here (the panel loads nothing from elsewhere). */
export function totpQrSvg(uri: string): Promise<string> {
  return QRCode.toString(uri, {
    type: "svg",
    errorCorrectionLevel: "M",
    margin: 2,
    color: { dark: "#000000", light: "#ffffff" },
  });
}

/** A code as a person types it: digits only (spaces and dashes dropped); anything else never matches. */
export function normalizeTotpCode(code: string): string | undefined {
  const digits = code.replace(/[\s-]/g, "");
  return new RegExp(`^\\d{${DIGITS}}$`).test(digits) ? digits : undefined;
}

/** The time step a code belongs to (within one step of now), or undefined when it is not right. */
export function totpStepOf(secret: string, code: string, now = Date.now()): number | undefined {
  const token = normalizeTotpCode(code);
  if (!token) return undefined;
  const delta = totpOf(secret).validate({ token, timestamp: now, window: WINDOW_STEPS });
  if (delta === null) return undefined;
  return Math.floor(now / 1000 / PERIOD_SECONDS) + delta;
}
