/** A minimal browser for server-rendered forms: a cookie jar, manual redirects, form submission. */
export interface Page {
  status: number;
  location: string | null;
  headers: Headers;
  html: string;
}

const ENTITIES: Record<string, string> = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'" };
const decode = (text: string) => text.replace(/&(amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity] as string);

export function hiddenFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) {
    fields[decode(match[1] as string)] = decode(match[2] as string);
  }
  return fields;
}

export function formAction(html: string): string {
  const match = /<form method="post" action="([^"]*)"/.exec(html);
  if (!match) throw new Error(`no form in page:\n${html}`);
  return decode(match[1] as string);
}

export function buttons(html: string, name: string): string[] {
  return [...html.matchAll(new RegExp(`<button type="submit" name="${name}" value="([^"]*)"`, "g"))].map((match) =>
    decode(match[1] as string),
  );
}

export class Browser {
  readonly cookies = new Map<string, string>();
  constructor(readonly origin: string) {}

  async request(path: string, init: RequestInit = {}): Promise<Page> {
    const url = new URL(path, this.origin);
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) {
      headers.set("cookie", [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; "));
    }
    const response = await fetch(url, { ...init, headers, redirect: "manual" });
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";");
      const [name, ...value] = (pair as string).split("=");
      const expired = attributes.some((attribute) => /^\s*(max-age=0|expires=thu, 01 jan 1970)/i.test(attribute));
      if (expired) this.cookies.delete((name as string).trim());
      else this.cookies.set((name as string).trim(), value.join("="));
    }
    return {
      status: response.status,
      location: response.headers.get("location"),
      headers: response.headers,
      html: await response.text(),
    };
  }

  get(path: string) {
    return this.request(path);
  }

  /** Submits the page's form with its hidden fields, the given fields, and optionally a button. */
  submit(page: Page, fields: Record<string, string> = {}, omit: string[] = []): Promise<Page> {
    const values = { ...hiddenFields(page.html), ...fields };
    for (const name of omit) delete values[name];
    return this.request(formAction(page.html), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(values).toString(),
    });
  }
}
