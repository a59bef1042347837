import { ApiError } from "./graphql";
import { problem } from "./session";

/** The organization's logo (src/modules/legal-profile/logo.routes.ts): the body is the image itself. */
const LOGO_PATH = "/admin/organization/logo";

async function send(org: string, init: RequestInit): Promise<{ logo_url: string | null }> {
  let response: Response;
  try {
    response = await fetch(`${LOGO_PATH}?${new URLSearchParams({ organization: org })}`, {
      credentials: "same-origin",
      ...init,
      headers: { accept: "application/json", ...init.headers },
    });
  } catch (error) {
    if ((error as Error).name === "AbortError") throw error;
    throw new ApiError("The server could not be reached. Check your connection and try again.", "network_error", 0);
  }
  if (!response.ok) throw await problem(response);
  return (await response.json()) as { logo_url: string | null };
}

/** Uploads a PNG, JPEG or WebP file as the organization's logo; the server checks and resizes it. */
export function uploadLogo(org: string, file: File) {
  return send(org, { method: "PUT", headers: { "content-type": file.type || "application/octet-stream" }, body: file });
}

/** Takes the logo off pages, emails and future receipts. */
export function removeLogo(org: string) {
  return send(org, { method: "DELETE" });
}
