/*
 * The passkey button of the authorization server's sign-in pages (src/oauth/pages.ts, passkeyForm).
 * Its form stays hidden where the browser has no WebAuthn. Pressed, it asks the server for a challenge
 * (`<action>/options`), lets the browser's own dialog sign it with a passkey, and sends the answer
 * back with the form's hidden fields (the authorization request, the CSRF token); the server answers
 * where the authorization goes on. A refusal is shown as the server words it, in the page's language.
 */
(() => {
  const form = /** @type {HTMLFormElement | null} */ (document.getElementById("passkey-form"));
  if (!form || typeof window.PublicKeyCredential !== "function" || !navigator.credentials) return;
  const button = /** @type {HTMLButtonElement} */ (form.querySelector("button"));
  const notice = /** @type {HTMLElement} */ (document.getElementById("passkey-error"));
  const action = form.getAttribute("action");
  const label = button.textContent;
  const words = form.dataset;

  // WebAuthn speaks bytes; the server, base64url (as @simplewebauthn/browser encodes them).
  const bytes = (/** @type {string} */ text) => {
    const base64 = text.replace(/-/g, "+").replace(/_/g, "/");
    const binary = atob(base64.padEnd(Math.ceil(base64.length / 4) * 4, "="));
    return Uint8Array.from(binary, (char) => char.charCodeAt(0));
  };
  const text = (/** @type {ArrayBuffer} */ buffer) =>
    btoa(String.fromCharCode(...new Uint8Array(buffer)))
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "");

  /** A refusal to show as it is. */
  class Refused extends Error {}
  const say = (/** @type {string} */ message) => {
    notice.textContent = message;
    notice.className = message ? "error" : "";
  };

  const post = async (/** @type {string} */ path, /** @type {unknown} */ body) => {
    let response;
    try {
      response = await fetch(path, {
        method: "POST",
        credentials: "same-origin",
        headers: {
          accept: "application/json",
          "content-type": "application/json",
          // The server words its refusals in this language (problem details follow Accept-Language).
          "accept-language": document.documentElement.lang || "en",
        },
        body: JSON.stringify(body),
      });
    } catch {
      throw new Refused(words.failed);
    }
    const answer = await response.json().catch(() => ({}));
    if (!response.ok) throw new Refused(typeof answer.detail === "string" ? answer.detail : words.failed);
    return answer;
  };

  /** The browser's dialog; whatever it refuses (cancelled, timed out, no passkey of this site) is "not used". */
  const assertion = async (options) => {
    const allowed = options.allowCredentials ?? [];
    let credential;
    try {
      credential = /** @type {PublicKeyCredential | null} */ (
        await navigator.credentials.get({
          publicKey: {
            challenge: bytes(options.challenge),
            rpId: options.rpId,
            timeout: options.timeout,
            userVerification: options.userVerification,
            // None listed: any passkey of this site may answer (a discoverable credential names its user).
            allowCredentials: allowed.length
              ? allowed.map((known) => ({ type: "public-key", id: bytes(known.id), transports: known.transports }))
              : undefined,
          },
        })
      );
    } catch {
      credential = null;
    }
    if (!credential) throw new Refused(words.notUsed);
    const response = /** @type {AuthenticatorAssertionResponse} */ (credential.response);
    const handle = response.userHandle?.byteLength ? { userHandle: text(response.userHandle) } : {};
    return {
      id: credential.id,
      rawId: text(credential.rawId),
      type: credential.type,
      response: {
        clientDataJSON: text(response.clientDataJSON),
        authenticatorData: text(response.authenticatorData),
        signature: text(response.signature),
        ...handle,
      },
      clientExtensionResults: credential.getClientExtensionResults(),
      ...(credential.authenticatorAttachment ? { authenticatorAttachment: credential.authenticatorAttachment } : {}),
    };
  };

  form.hidden = false;
  document.getElementById("passkey-unsupported")?.setAttribute("hidden", "");
  button.addEventListener("click", async () => {
    const fields = Object.fromEntries(new FormData(form));
    say("");
    button.disabled = true;
    button.textContent = words.busy;
    try {
      const options = await post(`${action}/options`, { form: fields });
      const credential = await assertion(options);
      const done = await post(action, { credential, form: fields });
      // Only a path of this site (the authorization request, or the root).
      if (typeof done.location !== "string" || !/^\/(?![/\\])/.test(done.location)) throw new Refused(words.failed);
      location.assign(done.location);
    } catch (error) {
      button.disabled = false;
      button.textContent = label;
      say(error instanceof Refused ? error.message : words.failed);
    }
  });
})();
