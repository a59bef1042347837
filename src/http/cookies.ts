/**
 * The attributes of every cookie this server sets, decided in one place (docs/security.md, "Cookies"):
 * always HttpOnly; Secure whenever the public URL the cookie is served from is https (a browser drops
 * a Secure cookie set over plain http, so it must follow that URL, not a separate switch); SameSite
 * chosen per cookie by the caller.
 */
export interface CookieAttributes {
  path: string;
  httpOnly: true;
  secure: boolean;
  sameSite: "lax" | "strict";
}

/** True when cookies served from this public URL (BASE_URL, AUTH_URL) must be Secure. */
export function isSecureOrigin(publicUrl: string): boolean {
  return new URL(publicUrl).protocol === "https:";
}

export function cookieAttributes(
  publicUrl: string,
  options: { path: string; sameSite: "lax" | "strict" },
): CookieAttributes {
  return { path: options.path, httpOnly: true, secure: isSecureOrigin(publicUrl), sameSite: options.sameSite };
}

/**
 * The language a visitor chose with a page's switcher (src/i18n/negotiate.ts LOCALE_COOKIE): a
 * preference, not a credential, kept a year on the whole site, sent on top-level navigations.
 */
export function localeCookieAttributes(publicUrl: string): CookieAttributes & { maxAge: number } {
  return { ...cookieAttributes(publicUrl, { path: "/", sameSite: "lax" }), maxAge: 365 * 24 * 3600 };
}
