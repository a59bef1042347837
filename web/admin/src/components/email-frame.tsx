/**
 * An email's HTML, shown as the donor's mail client would: in a sandboxed frame with no scripts,
 * no forms, no same-origin access (an opaque origin) and no navigation of the panel. The frame
 * inherits the panel's security policy, so remote images (a logo on another host) are not loaded,
 * as many mail clients do until the reader allows them.
 *
 * A new email gets a new frame (keyed by its HTML) rather than a new `srcdoc` on the old one:
 * changing `srcdoc` navigates the frame, which adds an entry to the panel's history (Back would
 * step through earlier previews) and leaves Chromium re-creating the frame's document in place.
 */
export function EmailFrame({ html, title, testId = "email-frame" }: { html: string; title: string; testId?: string }) {
  return (
    <iframe
      key={html}
      className="email-frame"
      sandbox=""
      srcDoc={html}
      title={title}
      referrerPolicy="no-referrer"
      data-testid={testId}
    />
  );
}
