/*
 * Donata's donation form on a charity's own website (docs/embed.md):
 *
 *   <script src="{base_url}/embed.js" data-organization="slug" data-campaign="slug" async></script>
 *
 * renders a Donate button right after the tag, which opens the hosted donation page in an overlay
 * (a modal dialog: focus kept inside, Escape and the close button close it, focus returns to the
 * button); with data-mode="inline" the page itself, in a frame as tall as its content. Everything is
 * drawn inside shadow roots, so the host page's CSS neither reaches nor breaks it. The page tells its
 * height and a completed gift by postMessage; a gift becomes a `donata:donation_completed`
 * CustomEvent on window. No framework, nothing kept on the host page's origin.
 */
(() => {
  // The words of each language, from the server's catalogs (src/i18n/catalogs/<locale>/embed.json).
  const WORDS = /** @type {Record<string, Record<string, string>>} */ ({ en: {} });
  const MARK = "data-donata-embedded";

  const CSS = `
:host { all: initial; }
button { font: 600 1rem/1.2 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; cursor: pointer; }
.donate { display: inline-block; padding: .75rem 1.5rem; border: 0; border-radius: 10px;
  background: #0f766e; color: #fff; }
.donate:hover { background: #115e59; }
.donate:focus-visible, .close:focus-visible { outline: 3px solid #1d4ed8; outline-offset: 2px; }
dialog { box-sizing: border-box; width: min(42rem, calc(100vw - 2rem)); height: min(52rem, calc(100dvh - 2rem));
  max-width: 100vw; max-height: 100dvh; padding: 0; border: 0; border-radius: 12px; background: #fff; color: #111;
  box-shadow: 0 20px 60px rgba(0, 0, 0, .35); overflow: hidden; }
dialog[open] { display: flex; flex-direction: column; }
dialog::backdrop { background: rgba(17, 24, 39, .6); }
.bar { display: flex; justify-content: flex-end; padding: .4rem; border-bottom: 1px solid #e5e7eb; }
.close { display: inline-flex; gap: .4rem; align-items: center; padding: .45rem .8rem; border: 1px solid #9ca3af;
  border-radius: 8px; background: #fff; color: #111; }
.close:hover { background: #f3f4f6; }
.edge { position: absolute; width: 1px; height: 1px; overflow: hidden; }
iframe { display: block; width: 100%; border: 0; background: transparent; }
dialog iframe { flex: 1; min-height: 0; }
@media (max-width: 40rem) { dialog { width: 100vw; height: 100dvh; border-radius: 0; } }
`;

  /** Styles for a shadow root: a constructed sheet (untouched by a host page's style-src), else a <style>. */
  function styled(/** @type {ShadowRoot} */ root) {
    try {
      const sheet = new CSSStyleSheet();
      sheet.replaceSync(CSS);
      root.adoptedStyleSheets = [sheet];
    } catch (_) {
      const style = document.createElement("style");
      style.textContent = CSS;
      root.appendChild(style);
    }
  }

  /** The language of the words: data-lang, else the host page's (<html lang>), when it is one we have. */
  function languageOf(/** @type {HTMLScriptElement} */ script) {
    const stated = script.dataset.lang || script.closest("[lang]")?.getAttribute("lang") || "";
    const code = stated.toLowerCase().split("-")[0];
    return Object.hasOwn(WORDS, code) ? code : null;
  }

  function embed(/** @type {HTMLScriptElement} */ script) {
    script.setAttribute(MARK, "");
    const organization = script.dataset.organization;
    const campaign = script.dataset.campaign;
    if (!organization || !campaign) return;
    const language = languageOf(script);
    const words = WORDS[language || "en"] || WORDS.en;
    const mode = script.dataset.mode === "inline" ? "inline" : "overlay";
    const base = new URL(".", script.src);
    const page = new URL(`donate/${encodeURIComponent(organization)}/${encodeURIComponent(campaign)}`, base);
    page.searchParams.set("embed", mode);
    if (language) page.searchParams.set("lang", language);

    const frame = document.createElement("iframe");
    frame.title = words.form;
    // Stripe's Payment Element asks for the Payment Request API (wallets) inside the frame.
    frame.allow = "payment";
    frame.setAttribute("loading", mode === "inline" ? "lazy" : "eager");

    let completed = false;
    let close = () => {};
    window.addEventListener("message", (event) => {
      if (event.origin !== base.origin || event.source !== frame.contentWindow) return;
      const data = event.data;
      if (!data || typeof data !== "object") return;
      if (data.type === "donata:resize" && mode === "inline" && Number.isFinite(data.height)) {
        frame.style.height = `${Math.min(Math.max(Math.ceil(data.height), 200), 20000)}px`;
      } else if (data.type === "donata:close") {
        close();
      } else if (data.type === "donata:donation_completed") {
        completed = true;
        const detail = {
          amount: Number(data.amount),
          currency: String(data.currency),
          frequency: Number(data.frequency),
          campaign: String(data.campaign),
          organization: String(data.organization),
          pending: data.pending === true,
        };
        window.dispatchEvent(new CustomEvent("donata:donation_completed", { detail }));
      }
    });

    const host = document.createElement("donata-embed");
    script.after(host);
    const root = host.attachShadow({ mode: "open" });
    styled(root);

    if (mode === "inline") {
      frame.src = page.href;
      frame.style.height = "640px";
      root.appendChild(frame);
      return;
    }

    const button = document.createElement("button");
    button.type = "button";
    button.className = "donate";
    button.textContent = script.dataset.label || words.button;
    button.setAttribute("aria-haspopup", "dialog");
    root.appendChild(button);

    /** @type {HTMLDialogElement | null} */
    let dialog = null;
    let scrollWas = "";

    function build() {
      const overlayHost = document.createElement("donata-embed");
      document.body.appendChild(overlayHost);
      const overlay = overlayHost.attachShadow({ mode: "open" });
      styled(overlay);
      const box = document.createElement("dialog");
      box.setAttribute("aria-modal", "true");
      box.setAttribute("aria-label", words.form);
      // Two edges keep Tab inside: past the last stop back to the close button, before the first into the form.
      const start = document.createElement("span");
      const end = document.createElement("span");
      for (const edge of [start, end]) {
        edge.className = "edge";
        edge.tabIndex = 0;
      }
      const bar = document.createElement("div");
      bar.className = "bar";
      const closeButton = document.createElement("button");
      closeButton.type = "button";
      closeButton.className = "close";
      const cross = document.createElement("span");
      cross.setAttribute("aria-hidden", "true");
      cross.textContent = "×";
      closeButton.append(cross, words.close);
      bar.appendChild(closeButton);
      box.append(start, bar, frame, end);
      overlay.appendChild(box);
      closeButton.addEventListener("click", () => close());
      start.addEventListener("focus", () => frame.focus());
      end.addEventListener("focus", () => closeButton.focus());
      // Escape (a cancel request) closes through close(), which gives the focus back.
      box.addEventListener("cancel", (event) => {
        event.preventDefault();
        close();
      });
      box.addEventListener("keydown", (event) => {
        if (event.key === "Escape") {
          event.preventDefault();
          close();
        }
      });
      // However it closes, the page scrolls again and the focus is back on the button.
      box.addEventListener("close", () => {
        document.documentElement.style.overflow = scrollWas;
        button.focus();
      });
      return box;
    }

    close = () => {
      if (!dialog?.open) return;
      // The page scrolls again at once: the dialog's "close" event (which does it too, however the
      // dialog closes) comes a task later.
      document.documentElement.style.overflow = scrollWas;
      dialog.close();
    };

    button.addEventListener("click", () => {
      if (!dialog) dialog = build();
      // A new form after a gift; the same one (and what was typed) otherwise.
      if (!frame.src || completed) {
        completed = false;
        frame.src = page.href;
      }
      scrollWas = document.documentElement.style.overflow;
      document.documentElement.style.overflow = "hidden";
      dialog.showModal();
      /** @type {HTMLButtonElement} */ (dialog.querySelector(".close")).focus();
    });
  }

  const current = /** @type {HTMLScriptElement | null} */ (document.currentScript);
  const tags = /** @type {NodeListOf<HTMLScriptElement>} */ (
    document.querySelectorAll(`script[data-organization][src]:not([${MARK}])`)
  );
  for (const script of current && !current.hasAttribute(MARK) ? [current, ...tags] : tags) {
    if (!script.hasAttribute(MARK) && /\/embed\.js(?:[?#]|$)/.test(script.src)) embed(script);
  }
})();
