/**
 * The server computes the page's Content-Security-Policy (which origins may be framed) when the
 * document loads. An application installed since then is not in it yet, so opening it takes a
 * fresh page load.
 */
const installedSinceLoad = new Set<string>();

export function rememberInstalled(clientId: string) {
  installedSinceLoad.add(clientId);
}

export function needsFreshLoad(clientId: string): boolean {
  return installedSinceLoad.has(clientId);
}

/** The application URL plus `__organization=<slug>`, keeping any query it already has. */
export function frameUrl(applicationUrl: string, org: string): string | null {
  try {
    const url = new URL(applicationUrl, window.location.href);
    if (url.protocol !== "https:" && url.protocol !== "http:") return null;
    url.searchParams.set("__organization", org);
    return url.toString();
  } catch {
    return null;
  }
}

const THIS_MACHINE = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * The origin of an application served from the machine the browser runs on (a development or demo
 * app, such as the demo's at http://localhost:4000/), null otherwise: its frame stays empty until
 * someone starts it there.
 */
export function originOnThisMachine(applicationUrl: string): string | null {
  try {
    const url = new URL(applicationUrl);
    return THIS_MACHINE.has(url.hostname) ? url.origin : null;
  } catch {
    return null;
  }
}

export function appPagePath(org: string, clientId: string): string {
  return `/admin/o/${encodeURIComponent(org)}/apps/${encodeURIComponent(clientId)}`;
}
