/**
 * An email's HTML, shown as the donor's mail client would: in a sandboxed frame with no scripts,
 * no forms, no same-origin access (an opaque origin) and no navigation of the panel. The frame
 * inherits the panel's security policy, so remote images (a logo on another host) are not loaded,
 * as many mail clients do until the reader allows them.
 */
export function EmailFrame({ html, title, testId = "email-frame" }: { html: string; title: string; testId?: string }) {
  return (
    <iframe
      className="email-frame"
      sandbox=""
      srcDoc={html}
      title={title}
      referrerPolicy="no-referrer"
      data-testid={testId}
    />
  );
}
