import type { FastifyInstance, FastifyReply } from "fastify";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { AppError } from "../errors/app-error.js";
import { escapeHtml, type PageSecurity, type RenderPage, sendHtmlPage } from "../http/html-page.js";
import { MIN_PASSWORD_LENGTH } from "../modules/users/users.service.js";
import { errorPage, page } from "../oauth/pages.js";
import { createSession, destroySession, SESSION_COOKIE, sessionCookieOptions } from "../sessions/sessions.service.js";
import { type CredentialThrottle, countCredentialAttempt } from "../sessions/sign-in.service.js";
import {
  passwordProblem,
  redeemSignInLink,
  requireLiveSignInLink,
  WELCOME_PATH,
} from "../sessions/sign-in-links.service.js";

const SECURITY: PageSecurity = { frameAncestors: "'none'", allow: ["form-action 'self'"] };

function choosePasswordPage(options: { token: string; email: string; purpose: string; error?: string }): RenderPage {
  const intro =
    options.purpose === "setup"
      ? "Welcome to Donata. Choose the password you will sign in with."
      : "Choose a new password; your other sessions will be signed out.";
  const error = options.error ? `<div class="error" role="alert">${escapeHtml(options.error)}</div>` : "";
  return page(
    "Choose your password",
    `<h1>Choose your password</h1>
    <p class="muted">${escapeHtml(intro)}</p>
    ${error}
    <form method="post" action="${WELCOME_PATH}">
      <input type="hidden" name="token" value="${escapeHtml(options.token)}">
      <label for="email">Email</label>
      <input id="email" name="email" type="email" autocomplete="username" value="${escapeHtml(options.email)}" readonly>
      <label for="password">New password (at least ${MIN_PASSWORD_LENGTH} characters)</label>
      <input id="password" name="password" type="password" autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}" maxlength="1000" required autofocus>
      <label for="repeat">Repeat the password</label>
      <input id="repeat" name="repeat" type="password" autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}" maxlength="1000" required>
      <button type="submit">Save and sign in</button>
    </form>`,
  );
}

const DEAD_LINK_HELP =
  "Ask an owner of your organization, or the operator of this server, for a new link (`donata user link --email …`).";

const field = (body: unknown, name: string) => {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === "string" ? value : undefined;
};

/**
 * The page a one-time sign-in link opens (`donata setup`, `donata user link`): a GET shows the form
 * and changes nothing (mail scanners follow links); the POST uses the link up, sets the password and
 * signs the user in to the admin panel.
 */
export function welcomeRoutes(app: FastifyInstance, db: Db, config: Config, throttle: CredentialThrottle) {
  const send = (reply: FastifyReply, status: number, render: RenderPage) =>
    sendHtmlPage(reply, status, SECURITY, render);
  const deadLinkPage = (reply: FastifyReply, error: AppError) =>
    send(
      reply,
      error.status,
      errorPage(error.status === 410 ? "Link expired" : "Link not valid", `${error.message} ${DEAD_LINK_HELP}`),
    );

  app.get(WELCOME_PATH, { schema: { hide: true } }, async (request, reply) => {
    const token = (request.query as Record<string, unknown>).token;
    try {
      const link = await requireLiveSignInLink(db, token);
      return send(reply, 200, choosePasswordPage({ token: token as string, ...link }));
    } catch (error) {
      if (error instanceof AppError && (error.status === 404 || error.status === 410))
        return deadLinkPage(reply, error);
      throw error;
    }
  });

  app.post(WELCOME_PATH, { schema: { hide: true } }, async (request, reply) => {
    const token = field(request.body, "token") ?? "";
    const password = field(request.body, "password") ?? "";
    const repeat = field(request.body, "repeat") ?? "";
    try {
      const link = await requireLiveSignInLink(db, token).catch(async (error: unknown) => {
        // Counted as well, so nobody tries tokens at leisure.
        await countCredentialAttempt(throttle, { account: { email: "sign-in link" }, address: request.ip });
        throw error;
      });
      const attempt = await countCredentialAttempt(throttle, { account: { userId: link.userId }, address: request.ip });
      const problem = passwordProblem(password) ?? (password === repeat ? undefined : "The two passwords differ.");
      if (problem) return send(reply, 400, choosePasswordPage({ token, ...link, error: problem }));
      const userId = await redeemSignInLink(db, token, password);
      await attempt.succeeded();
      await destroySession(db, request.cookies[SESSION_COOKIE]);
      const session = await createSession(db, config, userId);
      reply.setCookie(SESSION_COOKIE, session, sessionCookieOptions(config.baseUrl, config.sessionTtlSeconds));
      return reply.code(303).header("cache-control", "no-store").redirect("/admin/");
    } catch (error) {
      if (error instanceof AppError && (error.status === 404 || error.status === 410))
        return deadLinkPage(reply, error);
      if (error instanceof AppError && (error.status === 429 || error.status === 503)) {
        if (error.headers) reply.headers(error.headers);
        return send(reply, error.status, errorPage("Try again later", error.message));
      }
      throw error;
    }
  });
}
